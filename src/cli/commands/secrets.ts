import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { createApi } from '../api.ts';
import { resolveAppId } from '../app-link.ts';
import { c, CliError, printJson, table } from '../output.ts';
import { readyWaitingRelease, republish } from './releases.ts';

/** Reads a secret value from stdin: hidden prompt on a TTY, the whole input (one trailing newline trimmed) otherwise. */
export async function readValue(name: string): Promise<string> {
  if (process.stdin.isTTY) {
    const muted = new Writable({ write: (_chunk, _enc, cb) => cb() });
    process.stderr.write(`Value for ${name} (input hidden): `);
    const rl = createInterface({ input: process.stdin, output: muted, terminal: true });
    const value = await new Promise<string>((resolve) => rl.once('line', resolve));
    rl.close();
    process.stderr.write('\n');
    return value;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

export async function secretsList(opts: { app?: string; json?: boolean }): Promise<void> {
  const api = await createApi();
  const appId = await resolveAppId(opts.app);
  const r = await api.request('GET /v0/apps/{app_id}/secrets', { params: { app_id: appId } });
  if (opts.json) return printJson(r);
  const rows = r.secrets.map((s) => ({
    ...s,
    present: s.present ? c.green('set') : c.yellow('missing'),
  }));
  process.stdout.write(table(rows, ['name', 'present', 'updated_at']) + '\n');
}

export async function secretsSet(
  name: string,
  value: string | undefined,
  opts: { app?: string; json?: boolean },
): Promise<void> {
  const appId = await resolveAppId(opts.app);
  const api = await createApi();
  const v = value ?? (await readValue(name));
  if (value !== undefined && process.stdout.isTTY) {
    process.stderr.write(
      c.dim(
        'note: a value on the command line may stay in your shell history; omit it to be prompted.\n',
      ),
    );
  }
  if (!v && value === undefined)
    throw new CliError(
      'No value was given on stdin.',
      'invalid_request',
      undefined,
      `echo -n "value" | platform secrets set ${name}`,
    );
  const r = await api.request('PUT /v0/apps/{app_id}/secrets/{name}', {
    params: { app_id: appId, name },
    body: { value: v },
  });
  if (opts.json) return printJson(r);
  process.stdout.write(
    `${c.green('✔ set')} ${r.name} ${c.dim('(the value is never shown again)')}\n`,
  );
  await offerWaitingRelease(api, appId, { app: opts.app });
}

/**
 * After a secret is set: the newest release that waited for secrets may now go live. On a terminal,
 * ask; otherwise say the command.
 */
async function offerWaitingRelease(
  api: Awaited<ReturnType<typeof createApi>>,
  appId: string,
  opts: { app?: string },
) {
  const waiting = await readyWaitingRelease(api, appId).catch(() => undefined);
  if (!waiting) return;
  process.stdout.write(`  ${waiting} was waiting for its secrets; they are all set now.\n`);
  if (process.stdin.isTTY && process.stdout.isTTY) {
    const rl = createInterface({ input: process.stdin, output: process.stdout });
    const answer = await new Promise<string>((resolve) =>
      rl.question('  Publish it now? [Y/n] ', resolve),
    );
    rl.close();
    if (/^(y|yes|)$/i.test(answer.trim())) return republish(waiting, { app: opts.app });
  }
  process.stdout.write(`  Publish it: ${c.bold(`platform republish ${waiting}`)}\n`);
}

export async function secretsRm(
  name: string,
  opts: { app?: string; json?: boolean },
): Promise<void> {
  const appId = await resolveAppId(opts.app);
  const api = await createApi();
  const r = await api.request('DELETE /v0/apps/{app_id}/secrets/{name}', {
    params: { app_id: appId, name },
  });
  if (opts.json) return printJson(r);
  process.stdout.write(
    r.deleted ? `${c.green('✔ deleted')} ${name}\n` : `${name} was not set; nothing to delete.\n`,
  );
}
