import { readFile } from 'node:fs/promises';
import { SingleBar } from 'cli-progress';
import type { PublishAppResponse } from '../../apps/schemas.ts';
import { createApi, type Api } from '../api.ts';
import { BuildError } from '../build.ts';
import { preparePublish, type Prepared } from '../prepare.ts';
import { linkApp, readLinkedApp } from '../app-link.ts';
import type { LocalFile } from '../bundle.ts';
import { c, CliError, printJson } from '../output.ts';
import { readValue } from './secrets.ts';

/** Exit codes of `platform publish` when the release is stored but not live (README, docs/decisions/sign-in-and-members.md). */
export const NOT_LIVE_EXIT: Partial<Record<string, number>> = {
  pending_secrets: 3,
  requires_migration: 4,
  failed: 5,
};

/** The publish body as a stream: files are read and base64-encoded one at a time. */
function bodyStream(
  head: Record<string, unknown>,
  files: LocalFile[],
  onFile: (bytes: number) => void,
): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  const prefix =
    JSON.stringify(head).slice(0, -1) + (Object.keys(head).length ? ',' : '') + '"files":[';
  let i = -1;
  return new ReadableStream({
    async pull(controller) {
      if (i === -1) {
        controller.enqueue(enc.encode(prefix));
        i = 0;
        return;
      }
      if (i >= files.length) {
        controller.enqueue(enc.encode(']}'));
        controller.close();
        return;
      }
      const f = files[i]!;
      const bytes = f.bytes
        ? Buffer.from(f.bytes.buffer, f.bytes.byteOffset, f.bytes.byteLength)
        : await readFile(f.abs);
      const entry = JSON.stringify({
        path: f.path,
        content_type: f.contentType,
        content_base64: bytes.toString('base64'),
      });
      controller.enqueue(enc.encode((i > 0 ? ',' : '') + entry));
      onFile(f.size);
      i++;
    },
  });
}

/** How many times a publish the platform was too busy to take is sent again, and the longest wait between. */
export const BUSY_RETRIES = 3;
const MAX_RETRY_WAIT_S = 30;

/** What the CLI says before sending a busy-refused publish again. */
export const busyMessage = (seconds: number, attempt: number) =>
  `${c.yellow('The platform is busy with other publishes')}; sending again in ${seconds} s (retry ${attempt} of ${BUSY_RETRIES}).`;

/** Seconds to wait before sending again when the platform refused a publish as busy (503 with `retry_after`). */
function busyFor(err: unknown): number | undefined {
  if (!(err instanceof CliError) || err.code !== 'service_unavailable') return undefined;
  const after = err.details?.retry_after;
  return typeof after === 'number' && after >= 0 ? Math.min(after, MAX_RETRY_WAIT_S) : undefined;
}

/**
 * Sends a prepared release: a new app without `appId`, else a new release of that app. A publish
 * refused because the platform is taking too many large ones at once (nothing was stored) is sent
 * again after the wait it asks for, up to BUSY_RETRIES times; `onBusy` hears of each wait.
 */
export async function sendRelease(
  api: Api,
  appId: string | undefined,
  prepared: Prepared,
  onProgress: (sent: number) => void = () => {},
  onBusy: (seconds: number, attempt: number) => void = () => {},
  mode: { preview?: boolean; allowMissingHandlers?: boolean } = {},
): Promise<PublishAppResponse> {
  // a module without a handler for what its manifest declares is refused, unless asked not to
  const require_handlers = mode.allowMissingHandlers ? ('false' as const) : ('true' as const);
  for (let attempt = 1; ; attempt++) {
    let sent = 0;
    const stream = bodyStream(prepared.head, prepared.files, (n) => onProgress((sent += n)));
    try {
      return appId
        ? await api.request('PUT /v0/apps/{app_id}', {
            params: { app_id: appId },
            query: { require_handlers, ...(mode.preview ? { preview: 'true' as const } : {}) },
            bodyStream: stream,
          })
        : await api.request('PUT /v0/apps', { query: { require_handlers }, bodyStream: stream });
    } catch (err) {
      const wait = busyFor(err);
      if (wait === undefined || attempt > BUSY_RETRIES) throw err;
      onBusy(wait, attempt);
      await new Promise((resolve) => setTimeout(resolve, wait * 1000));
    }
  }
}

export async function publish(
  dir: string,
  opts: {
    app?: string;
    message?: string;
    json?: boolean;
    bundle?: boolean;
    preview?: boolean;
    allowMissingHandlers?: boolean;
  },
): Promise<void> {
  const appId = opts.app ?? (await readLinkedApp(dir));
  if (opts.preview && !appId)
    throw new CliError(
      'A preview is published beside a live app, and this folder is not linked to one yet.',
      'invalid_request',
      undefined,
      'Publish it once without --preview (or pass --app <app_id>).',
    );
  const prepared = await preparePublishOrExit(dir, opts);
  const { manifest, files, total } = prepared;
  if (!opts.json) printPreparation(prepared);
  const api = await createApi();

  const showBar = Boolean(process.stderr.isTTY) && !opts.json && total > 1024 * 1024;
  const bar = showBar
    ? new SingleBar({
        format: ' uploading [{bar}] {percentage}% | {value}/{total} KiB',
        hideCursor: true,
        stream: process.stderr,
      })
    : undefined;
  bar?.start(Math.ceil(total / 1024), 0);
  let result: PublishAppResponse;
  try {
    result = await sendRelease(
      api,
      appId,
      prepared,
      (sent) => bar?.update(Math.ceil(sent / 1024)),
      (seconds, attempt) =>
        process.stderr.write(`${bar ? '\n' : ''}${busyMessage(seconds, attempt)}\n`),
      { preview: opts.preview === true, allowMissingHandlers: opts.allowMissingHandlers === true },
    );
  } finally {
    bar?.stop();
  }
  await linkApp(dir, result.app_id, api.url);
  // at a terminal, a release waiting for secrets asks for them and is published again in one go
  if (
    result.activation.status === 'pending_secrets' &&
    process.stdin.isTTY &&
    process.stdout.isTTY &&
    !opts.json
  ) {
    const missing = result.activation.missing_secrets;
    process.stdout.write(
      `${c.yellow('●')} ${result.release_id} needs ${missing.length === 1 ? 'a secret' : `${missing.length} secrets`} to go live: ${missing.join(', ')}\n`,
    );
    for (const name of missing) {
      const value = await readValue(name);
      if (!value)
        throw new CliError(
          `No value was given for ${name}; the release stays stored.`,
          'invalid_request',
        );
      await api.request('PUT /v0/apps/{app_id}/secrets/{name}', {
        params: { app_id: result.app_id, name },
        body: { value },
      });
      process.stdout.write(`  ${c.green('✔')} ${name} set\n`);
    }
    result = await api.request('POST /v0/apps/{app_id}/releases/{release_id}/republish', {
      params: { app_id: result.app_id, release_id: result.release_id },
    });
    process.stdout.write(c.dim(`published again as ${result.release_id}\n`));
  }
  // a release that did not go live is not a success: scripts and CI see it in the exit code
  process.exitCode = NOT_LIVE_EXIT[result.activation.status] ?? 0;
  if (opts.json) return printJson(result);

  const a = result.activation;
  const mark =
    result.status === 'published'
      ? c.green('✔ published')
      : result.preview
        ? c.green('✔ preview')
        : c.yellow('● stored, not live');
  process.stdout.write(
    `${mark} ${c.bold(String((manifest.app as { name?: string })?.name ?? result.app_id))}\n`,
  );
  process.stdout.write(
    `  app       ${result.app_id}${appId ? '' : c.dim('  (new; linked in .platform/app.json)')}\n`,
  );
  process.stdout.write(
    `  release   ${result.release_id}  ${c.dim(`${files.length} files, ${(total / 1024).toFixed(1)} KiB`)}\n`,
  );
  if (prepared.build)
    process.stdout.write(
      `  server    ${String((manifest.runtime as { server_entry?: string }).server_entry)} ${c.dim(`bundled (${prepared.build.provenance.inputs} modules)`)}\n`,
    );
  process.stdout.write(
    `  status    ${a.status}${result.previous_release_id ? c.dim(`  (previous live: ${result.previous_release_id})`) : ''}\n`,
  );
  if (a.status === 'pending_secrets') {
    process.stdout.write(`\n${c.yellow('Missing secrets:')} ${a.missing_secrets.join(', ')}\n`);
    for (const name of a.missing_secrets) process.stdout.write(`  platform secrets set ${name}\n`);
    process.stdout.write(
      'then publish again (at a terminal, `platform publish` asks for them and does both).\n',
    );
  }
  if (a.status === 'failed') {
    process.stdout.write(`\n${c.red('The server module cannot go live:')}\n`);
    for (const r of a.reasons) process.stdout.write(`  ${r}\n`);
    process.stdout.write(
      'Fix it and publish again; the live release keeps serving meanwhile. `platform events --type runtime.deploy_failed` has the details.\n',
    );
    if (a.reasons.some((r) => /^no \w+ handler/.test(r)))
      process.stdout.write(
        c.dim(
          'To let it go live without that handler (its jobs blocked, its webhooks answered 500), publish with --allow-missing-handlers.\n',
        ),
      );
  }
  if (a.status === 'requires_migration') {
    process.stdout.write(`\n${c.yellow('This release changes resources incompatibly:')}\n`);
    for (const r of a.reasons) process.stdout.write(`  - ${r}\n`);
    process.stdout.write(
      'Add a new collection, field, store or job name instead, backfill it, then stop using the old one.\n',
    );
  }
  if (result.preview) {
    process.stdout.write(
      `\n  ${c.bold(result.preview.url)}\n  ${c.dim(`opens ${result.preview.origin} in a browser until ${result.preview.expires_at}; the live release is unchanged.`)}\n  ${c.dim(`platform promote ${result.release_id}`)} makes it live.\n`,
    );
    return;
  }
  process.stdout.write(`\n  ${c.bold(result.origin)}\n`);
}

/** What the CLI wrote or supplied for the contract, said before anything is sent (on stderr: stdout stays the result). */
export function printPreparation(prepared: Prepared): void {
  const out = (s: string) => process.stderr.write(s);
  if (prepared.inferred) {
    out(
      `${c.cyan('●')} No manifest.platform.json: wrote one from ${prepared.inferred.from} (edit it and publish again to change it):\n`,
    );
    for (const line of JSON.stringify(prepared.inferred.manifest, null, 2).split('\n'))
      out(`  ${c.dim(line)}\n`);
    if (prepared.inferred.notes.length) {
      out(`${c.yellow('Not mapped as it was:')}\n`);
      for (const n of prepared.inferred.notes) out(`  - ${n}\n`);
    }
  }
  for (const n of prepared.notes) out(`${c.cyan('●')} ${n}\n`);
}

/** A build error is printed as the compiler prints it, and nothing is sent. */
async function preparePublishOrExit(
  dir: string,
  opts: { message?: string; bundle?: boolean },
): Promise<Prepared> {
  try {
    return await preparePublish(dir, {
      bundle: opts.bundle,
      message: opts.message,
      color: c.isColorSupported,
    });
  } catch (err) {
    if (err instanceof BuildError) process.stderr.write(err.pretty);
    throw err;
  }
}

export { CliError };
