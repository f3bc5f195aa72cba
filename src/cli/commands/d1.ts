/**
 * `platform d1 execute <database> --command|--file`: SQL on one of the app's D1 databases, as
 * `wrangler d1 execute --remote` runs it on Cloudflare (over src/sql/routes.ts). The database is
 * named by its `database_name`, as wrangler names it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { createApi } from '../api.ts';
import { resolveAppId } from '../app-link.ts';
import { appOpt, examples, jsonOpt } from '../command-kit.ts';
import { c, CliError, printJson, table } from '../output.ts';

type Opts = { app?: string; json?: boolean; command?: string; file?: string };

async function execute(database: string, opts: Opts): Promise<void> {
  if (!opts.command === !opts.file)
    throw new CliError(
      'Give the SQL with --command "…" or --file path.sql (one of them).',
      'usage_error',
    );
  const sql = opts.command ?? readFileSync(opts.file!, 'utf8');
  const appId = await resolveAppId(opts.app);
  const api = await createApi();
  const r = await api.request('POST /v0/apps/{app_id}/d1/{database}/query', {
    params: { app_id: appId, database },
    body: { sql },
  });
  if (opts.json) return printJson(r);
  const out: string[] = [];
  r.results.forEach((s, i) => {
    if (r.results.length > 1) out.push(c.dim(`statement ${i + 1}`));
    if (s.columns.length)
      out.push(
        table(
          s.rows.map((row) => Object.fromEntries(s.columns.map((col, j) => [col, show(row[j])]))),
          s.columns,
        ),
      );
    else out.push(`${s.changes} row${s.changes === 1 ? '' : 's'} changed`);
  });
  process.stdout.write(`${out.join('\n')}\n`);
}

async function exportDatabase(database: string, opts: Opts & { output?: string }): Promise<void> {
  const appId = await resolveAppId(opts.app);
  const api = await createApi();
  const res = await api.download(
    `/v0/apps/${encodeURIComponent(appId)}/d1/${encodeURIComponent(database)}/export`,
  );
  const text = await res.text();
  if (!opts.output) return void process.stdout.write(text);
  writeFileSync(opts.output, text);
  process.stderr.write(`${c.green('✔ exported')} ${database} to ${opts.output}\n`);
}

const show = (v: unknown) =>
  v === null ? c.dim('NULL') : Array.isArray(v) ? c.dim(`<blob ${v.length} bytes>`) : String(v);

export function addD1Commands(program: Command): void {
  const d1 = program.command('d1').description("the app's D1 databases");
  examples(
    d1
      .command('execute')
      .argument('<database>', 'the database_name the wrangler config binds')
      .description('run SQL on a D1 database (statements separated by ;)')
      .option('--command <sql>', 'the SQL to run')
      .option('--file <path>', 'a file of SQL to run')
      .option(...appOpt)
      .option(...jsonOpt)
      .action((db, o) => execute(db, o)),
    [
      'platform d1 execute my-db --command "select count(*) from users"',
      'platform d1 execute my-db --file seed.sql',
    ],
  );
  examples(
    d1
      .command('export')
      .argument('<database>', 'the database_name the wrangler config binds')
      .description('the database as SQL: its tables and rows, then indexes, views and triggers')
      .option('--output <path>', 'write it to this file (else to stdout)')
      .option(...appOpt)
      .action((db, o) => exportDatabase(db, o)),
    ['platform d1 export my-db --output my-db.sql'],
  );
}
