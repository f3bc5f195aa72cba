/**
 * `npm test`: runs every `test/**\/*.test.ts` uvu suite against real Postgres. Each file gets its
 * own database cloned from a migrated template (`create database … template …`), so files are
 * isolated and run in parallel. Postgres is the embedded one unless DATABASE_URL is set (then it
 * must allow CREATE DATABASE). Ends with the line `N passed, N failed`.
 *
 * Files named `*.solo.test.ts` start many processes of their own (the cluster): they run after the
 * others, one at a time, so they never compete with another file for the cores.
 *
 *   npm test                      all suites
 *   npm test -- publish accounts  only files whose path contains one of the words
 *   TEST_NODE_FLAGS='--cpu-prof --cpu-prof-dir=/tmp/prof' npm test -- x   node flags for each file's process
 *   TEST_WORKERS=3 npm test       files at once (default: the cores, 2 to 4; more does not help on
 *                                 two cores, where the suite is bound by CPU)
 *   TEST_SKIP=test/browser/ npm test   leave out files whose path contains one of the (comma-separated)
 *                                 words; the run says how many it left out
 *   TEST_FILE_TIMEOUT_S=60 npm test   stop a file after this long (default 300); its output then says
 *                                 what kept it running (the handles in Node's diagnostic report)
 *
 * Where Node does not strip types (20, 22) every file runs from a bundle (src/lib/bundle.mjs), all
 * made in one pass before the first file starts.
 *
 * The run's own cluster is scratch (`durable: false`): no fsync, commits not waited for on disk.
 */
import { spawn } from 'node:child_process';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { prepareDatabase } from '../src/boot.ts';
import { bundled } from '../src/lib/bundle.mjs';
import { nodeStripsTypes } from '../src/lib/node-typescript.mjs';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../src/db/embedded.ts';
import { findTests } from './_lib/test-files.ts';
import { onDeno } from '../src/lib/on-deno.ts';
import { DENO_V8_FLAGS, denoCommand, denoEnv } from './_lib/deno-command.ts';

const ROOT = path.resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..');

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

type Result = {
  file: string;
  passed: number;
  failed: number;
  skipped: number;
  output: string;
  ms: number;
};

/**
 * Each file runs as the npm scripts run theirs (src/lib/launch.mjs): TypeScript read by Node where
 * it strips types, elsewhere from a bundle, all files' bundles made in one pass before the run.
 */
const RUN_TYPESCRIPT = path.join(ROOT, 'src', 'lib', 'run-typescript.mjs');

const REPORTS = path.join(ROOT, '.data', 'test-reports');
const FILE_TIMEOUT_MS = Number(process.env.TEST_FILE_TIMEOUT_S ?? 300) * 1000;

/** Node writes a diagnostic report (its open handles, each worker's stack) on SIGUSR2. */
const REPORT_ON_SIGNAL = ['--import', path.join(ROOT, 'scripts', '_lib', 'report-on-signal.mjs')];

/**
 * On Deno (`deno task test`), or with `TEST_RUNTIME=deno`, each file runs on Deno 2 instead: the
 * harness, the service it builds and every process it starts as an operator would (`deno task
 * start`, the admin command) run on Deno's runtime.
 */
const DENO = onDeno
  ? [process.execPath]
  : process.env.TEST_RUNTIME === 'deno'
    ? denoCommand()
    : undefined;
const DENO_PERMISSIONS = ['--allow-all', ...DENO_V8_FLAGS];

type Handle = {
  type: string;
  is_active?: boolean;
  is_referenced?: boolean;
  localEndpoint?: { host?: string; port?: number } | null;
  remoteEndpoint?: { host?: string; port?: number } | null;
  pid?: number;
  filename?: string;
  firesInMsFromNow?: number;
};

/**
 * Why a file that timed out was still running: the handles that keep its process alive and what
 * its main thread was doing, from the report Node writes on SIGUSR2 (_lib/report-on-signal.mjs).
 */
async function whatKeptItAlive(child: ReturnType<typeof spawn>, reportFile: string) {
  child.kill('SIGUSR2');
  for (let i = 0; i < 40; i++) {
    try {
      const report = JSON.parse(await readFile(reportFile, 'utf8')) as {
        libuv?: Handle[];
        javaScriptStack?: { stack?: string[] };
        workers?: unknown[];
      };
      const where = (e: Handle['localEndpoint']) => (e ? `${e.host}:${e.port}` : '');
      const alive = (report.libuv ?? [])
        .filter((h) => h.is_active && h.is_referenced)
        .map(
          (h) =>
            `  ${h.type}${h.pid ? ` pid ${h.pid}` : ''}${h.filename ? ` ${h.filename}` : ''}` +
            `${h.localEndpoint !== undefined ? ` ${where(h.localEndpoint)} -> ${where(h.remoteEndpoint)}` : ''}` +
            `${h.firesInMsFromNow !== undefined ? ` in ${h.firesInMsFromNow} ms` : ''}`,
        );
      const stack = report.javaScriptStack?.stack?.slice(0, 8).map((l) => `  ${l.trim()}`) ?? [];
      await rm(reportFile, { force: true });
      return [
        'what kept it running (Node diagnostic report):',
        ...alive,
        `  ${report.workers?.length ?? 0} worker threads`,
        ...(stack.length ? ['main thread:', ...stack] : []),
        '',
      ].join('\n');
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return '(no diagnostic report came)\n';
}

function runFile(file: string, databaseUrl: string): Promise<Result> {
  const started = Date.now();
  const reportFile = path.join(REPORTS, `${path.basename(file)}-${process.pid}-${started}.json`);
  return new Promise((resolve) => {
    const [command, ...args] = DENO
      ? [...DENO, 'run', ...DENO_PERMISSIONS, file]
      : [
          process.execPath,
          ...(process.env.TEST_NODE_FLAGS?.split(' ').filter(Boolean) ?? []),
          ...REPORT_ON_SIGNAL,
          RUN_TYPESCRIPT,
          file,
        ];
    const child = spawn(command!, args, {
      cwd: ROOT,
      env: {
        ...(DENO ? denoEnv() : process.env),
        DATABASE_URL: databaseUrl,
        TEST_DATABASE_URL: databaseUrl,
        TEST_REPORT_FILE: reportFile,
        // Node 22+ keeps compiled modules here for the next process (each file loads the same graph)
        NODE_COMPILE_CACHE:
          process.env.NODE_COMPILE_CACHE ?? path.join(ROOT, '.data', 'compile-cache'),
        FORCE_COLOR: '0',
        NO_COLOR: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    // SIGTERM first, so a file that started processes of its own can stop them; SIGKILL 5 s later
    let hardKill: ReturnType<typeof setTimeout> | undefined;
    const timer = setTimeout(async () => {
      output += `\n(timed out after ${FILE_TIMEOUT_MS / 1000} s)\n`;
      output += await whatKeptItAlive(child, reportFile);
      child.kill('SIGTERM');
      hardKill = setTimeout(() => child.kill('SIGKILL'), 5_000);
    }, FILE_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      clearTimeout(hardKill);
      const num = (label: string) =>
        Number(new RegExp(`${label}:\\s+(\\d+)`).exec(output)?.[1] ?? NaN);
      const total = num('Total');
      const passed = num('Passed');
      const skipped = num('Skipped') || 0;
      let failed = Number.isNaN(total) ? 1 : total - passed - skipped;
      if (code !== 0 && failed === 0) failed = 1; // crashed after its summary, or no summary at all
      resolve({
        file: path.relative(ROOT, file),
        passed: Number.isNaN(passed) ? 0 : passed,
        failed,
        skipped,
        output,
        ms: Date.now() - started,
      });
    });
  });
}

async function main(): Promise<void> {
  const filters = process.argv.slice(2);
  await mkdir(REPORTS, { recursive: true });
  const skip = process.env.TEST_SKIP?.split(',').filter(Boolean) ?? [];
  const matched = (await findTests(ROOT))
    .map((f) => path.join(ROOT, f))
    .filter((f) => !filters.length || filters.some((w) => f.includes(w)));
  const files = matched.filter((f) => !skip.some((w) => f.includes(w)));
  if (files.length < matched.length)
    console.log(`left out ${matched.length - files.length} files (TEST_SKIP=${skip.join(',')})`);
  if (!files.length) {
    console.log('no test files matched\n0 passed, 0 failed');
    process.exit(filters.length ? 1 : 0);
  }
  if (!nodeStripsTypes) {
    const started = Date.now();
    // with the commands the tests start (the service, the CLI, the npm scripts), so that no two
    // test processes build those at the same moment
    const commands = ['src/main.ts', 'src/cli/main.ts', 'scripts/admin.ts', 'scripts/migrate.ts'];
    await bundled([...files, ...commands.map((f) => path.join(ROOT, f))]);
    console.log(`bundled ${files.length} files in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  let embedded: EmbeddedPostgres | undefined;
  let runDir: string | undefined;
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    runDir = path.join(
      ROOT,
      process.env.PLATFORM_DATA_DIR ?? '.data',
      'test-runs',
      String(process.pid),
    );
    const port = 55000 + (process.pid % 5000);
    embedded = await startEmbeddedPostgres({ dataDir: runDir, port, durable: false });
    adminUrl = embedded.url('postgres');
  }
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const tag = `t${process.pid}`;
  const template = `${tag}_template`;
  const created: string[] = [];
  let results: Result[] = [];
  try {
    await admin.query(`drop database if exists ${template}`);
    await admin.query(`create database ${template}`);
    created.push(template);
    await prepareDatabase(withDatabase(adminUrl, template));
    const all = files.map((file, i) => ({ file, db: `${tag}_${i}` }));
    const solo = all.filter((f) => f.file.endsWith('.solo.test.ts'));
    const queue = all.filter((f) => !f.file.endsWith('.solo.test.ts'));
    const workers =
      Number(process.env.TEST_WORKERS) || Math.max(2, Math.min(4, availableParallelism()));
    const next = async (): Promise<void> => {
      const item = queue.shift();
      if (!item) return;
      await admin.query(`create database ${item.db} template ${template}`);
      created.push(item.db);
      const result = await runFile(item.file, withDatabase(adminUrl!, item.db));
      results.push(result);
      const status = result.failed ? 'FAIL' : 'ok  ';
      process.stdout.write(
        `${status} ${result.file}  (${result.passed} passed, ${result.failed} failed, ${(result.ms / 1000).toFixed(1)}s)\n`,
      );
      if (result.failed || process.env.TEST_VERBOSE)
        process.stdout.write(result.output.replace(/^/gm, '    ') + '\n');
      return next();
    };
    await Promise.all(Array.from({ length: workers }, next));
    queue.push(...solo);
    await next();
  } finally {
    for (const db of created.reverse())
      await admin.query(`drop database if exists ${db} with (force)`).catch(() => {});
    await admin.end();
    await embedded?.stop();
    if (runDir) await rm(runDir, { recursive: true, force: true }).catch(() => {});
  }
  results = results.sort((a, b) => a.file.localeCompare(b.file));
  const passed = results.reduce((n, r) => n + r.passed, 0);
  const failed = results.reduce((n, r) => n + r.failed, 0);
  const skipped = results.reduce((n, r) => n + r.skipped, 0);
  console.log(`\n${results.length} files`);
  console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
  process.exit(failed ? 1 : 0);
}

main().catch((err) => {
  console.error(err);
  console.log('0 passed, 1 failed');
  process.exit(1);
});
