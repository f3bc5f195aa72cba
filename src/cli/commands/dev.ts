/**
 * `platform dev [dir]`: the loop a developer lives in. Starts a local platform (or uses `--api`),
 * publishes the folder to a development app, republishes on every save, sets `.env` as secrets, and
 * prints the app's events as they happen. Ctrl-C stops all of it, Postgres included.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FSWatcher } from 'chokidar';
import { parse as parseEnv } from 'dotenv';
import * as v from 'valibot';
import type { PublishAppResponse } from '../../apps/schemas.ts';
import { SecretName } from '../../manifest/schema.ts';
import { createApiFor, type Api } from '../api.ts';
import { BuildError } from '../build.ts';
import { MANIFEST, readManifest } from '../bundle.ts';
import { inferManifest } from '../infer.ts';
import { existsSync } from 'node:fs';
import { resolveTarget } from '../credentials.ts';
import { defaultDataDir, startLocalService, type LocalService } from '../dev/local.ts';
import { formatEvent } from '../dev/print.ts';
import { watchFolder } from '../dev/watch.ts';
import { followEvents } from '../follow.ts';
import { c, CliError, printError } from '../output.ts';
import { preparePublish } from '../prepare.ts';
import { busyMessage, sendRelease } from './publish.ts';

export type DevOptions = {
  api?: string;
  port?: string;
  dataDir?: string;
  bundle?: boolean;
  debounce?: string;
};

/** `.platform/dev.json`: the development app of this folder, per platform it was made on. */
async function devApps(dir: string): Promise<Record<string, string>> {
  try {
    return JSON.parse(await readFile(path.join(dir, '.platform', 'dev.json'), 'utf8')) as Record<
      string,
      string
    >;
  } catch {
    return {};
  }
}

async function saveDevApp(dir: string, key: string, appId: string): Promise<void> {
  const all = { ...(await devApps(dir)), [key]: appId };
  await mkdir(path.join(dir, '.platform'), { recursive: true });
  await writeFile(path.join(dir, '.platform', 'dev.json'), JSON.stringify(all, null, 2) + '\n');
}

const say = (line: string) => process.stdout.write(line + '\n');
/** A publish the platform was too busy to take is sent again after its wait (sendRelease); say so. */
const busy = (seconds: number, attempt: number) => say(busyMessage(seconds, attempt));

export async function dev(dirArg: string, opts: DevOptions): Promise<void> {
  const dir = path.resolve(dirArg);
  // no manifest and nothing to write one from (as publish writes one): say so before starting anything
  if (!existsSync(path.join(dir, MANIFEST)) && !inferManifest(dir)) await readManifest(dir);
  let stopping = false;
  let local: LocalService | undefined;
  let starting: Promise<LocalService> | undefined;
  let watcher: FSWatcher | undefined;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say(c.dim('\nstopping…'));
    await watcher?.close().catch(() => {});
    // Ctrl-C while the local platform is still starting: let it finish, then stop it, Postgres included
    if (!local && starting) local = await starting.catch(() => undefined);
    await local?.stop().catch((err) => printError(err));
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));

  let api: Api;
  let linkKey: string;
  let originOf: (r: PublishAppResponse) => string = (r) => r.origin;
  if (opts.api) {
    const target = await resolveTarget();
    if (!target.apiKey)
      throw new CliError(
        'Not logged in.',
        'no_api_key',
        undefined,
        `Run \`platform login --api-url ${opts.api}\` first, or leave out --api to run a local platform.`,
      );
    api = createApiFor({
      apiUrl: opts.api.replace(/\/+$/, ''),
      apiKey: target.apiKey,
      accountId: target.accountId,
    });
    linkKey = api.url;
  } else {
    const dataDir = path.resolve(
      opts.dataDir ?? process.env.PLATFORM_DEV_DATA_DIR ?? defaultDataDir(),
    );
    if (dataDir === dir || dataDir.startsWith(dir + path.sep))
      throw new CliError(
        'The data directory must not be inside the app folder.',
        'invalid_request',
      );
    try {
      starting = startLocalService({
        dataDir,
        port: Number(opts.port ?? 8790),
        log: (l) => say(c.dim(l)),
      });
      local = await starting;
    } catch (err) {
      if (stopping) return;
      throw err;
    }
    if (stopping) return;
    api = createApiFor({ apiUrl: local.apiUrl, apiKey: local.apiKey });
    linkKey = `local:${dataDir}`;
    originOf = (r) => local!.appsUrl(r.app_id);
    say(`${c.green('●')} local platform at ${local.apiUrl}  ${c.dim(`(data in ${dataDir})`)}`);
  }

  let appId: string | undefined = (await devApps(dir))[linkKey];
  const secretsSet = new Map<string, string>();

  /** `.env` (dotenv syntax) as the dev app's secrets: changed values set, removed names deleted. */
  async function syncSecrets(): Promise<void> {
    if (!appId) return;
    let text = '';
    try {
      text = await readFile(path.join(dir, '.env'), 'utf8');
    } catch {
      // no .env
    }
    const wanted = parseEnv(text);
    for (const [name, value] of Object.entries(wanted)) {
      if (!v.is(SecretName, name)) {
        say(
          c.yellow(
            `.env: ${name} is not a secret name (A-Z, 0-9, _; starting with a letter): skipped`,
          ),
        );
        continue;
      }
      if (secretsSet.get(name) === value) continue;
      await api.request('PUT /v0/apps/{app_id}/secrets/{name}', {
        params: { app_id: appId, name },
        body: { value },
      });
      secretsSet.set(name, value);
    }
    for (const name of [...secretsSet.keys()]) {
      if (Object.hasOwn(wanted, name)) continue;
      await api.request('DELETE /v0/apps/{app_id}/secrets/{name}', {
        params: { app_id: appId, name },
      });
      secretsSet.delete(name);
    }
  }

  /** The newest event before the app's address was first shown: what follows it is printed. */
  let eventsFrom: { id: string | undefined } | undefined;
  const newestEvent = async (id: string) => {
    const latest = await api.request('GET /v0/apps/{app_id}/events', {
      params: { app_id: id },
      query: { limit: '1' },
    });
    return { id: latest.events[0]?.app_event_id };
  };

  let originShown = false;
  async function publishOnce(reason: string): Promise<void> {
    const started = performance.now();
    let prepared;
    try {
      prepared = await preparePublish(dir, {
        bundle: opts.bundle,
        color: c.isColorSupported,
        message: `platform dev: ${reason}`,
      });
    } catch (err) {
      if (err instanceof BuildError) process.stdout.write(err.pretty);
      printError(err);
      say(c.dim('The last good release keeps serving; waiting for changes.'));
      return;
    }
    try {
      await syncSecrets();
      let result: PublishAppResponse;
      try {
        result = await sendRelease(api, appId, prepared, undefined, busy);
      } catch (err) {
        // the development app is gone (a fresh data directory, or deleted): make another
        if (!(err instanceof CliError && err.code === 'not_found' && appId)) throw err;
        appId = undefined;
        result = await sendRelease(api, undefined, prepared, undefined, busy);
      }
      const created = appId !== result.app_id;
      appId = result.app_id;
      if (created) {
        await saveDevApp(dir, linkKey, appId);
        await syncSecrets();
        // the first release could not see .env yet
        if (result.activation.status === 'pending_secrets' && secretsSet.size)
          result = await sendRelease(api, appId, prepared, undefined, busy);
      }
      const ms = Math.round(performance.now() - started);
      const a = result.activation;
      if (result.status === 'published')
        say(
          `${c.green('✔ live')}  ${result.release_id}  ${c.dim(`${ms} ms, ${prepared.files.length} files${prepared.build ? ', bundled' : ''} (${reason})`)}`,
        );
      else {
        say(
          `${c.yellow(`● not live (${a.status})`)}  ${result.release_id}  ${c.dim('the last good release keeps serving')}`,
        );
        for (const r of a.reasons) say(`  ${r}`);
        if (a.missing_secrets.length) say(`  add ${a.missing_secrets.join(', ')} to .env`);
      }
      // the address once a session, at its first release (a start that did not build has not shown it yet), and for a new app
      if (created || !originShown) {
        // marked before the address is shown: a request made as soon as it is seen has its log printed
        eventsFrom ??= await newestEvent(appId).catch(() => undefined);
        say(`\n  ${c.bold(originOf(result))}\n`);
      }
      originShown = true;
    } catch (err) {
      printError(err);
      say(c.dim('The last good release keeps serving; waiting for changes.'));
    }
  }

  await publishOnce('start');
  if (stopping) return;
  if (!appId) {
    say(c.yellow('Nothing is published yet: fix the errors above and save.'));
  }

  // Rebuild on save: changes within `debounce` ms make one publish; a change during a publish makes one more after it.
  const debounceMs = Number(opts.debounce ?? 20);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> | undefined;
  let dirty: string | undefined;
  const changed = (file: string) => {
    dirty = path.relative(dir, file) || '.';
    clearTimeout(timer);
    timer = setTimeout(() => void run(), debounceMs);
  };
  const run = async () => {
    if (running || stopping || !dirty) return;
    const reason = dirty;
    dirty = undefined;
    running = publishOnce(`${reason} changed`);
    await running;
    running = undefined;
    if (dirty) void run();
  };
  watcher = await watchFolder(dir, changed);
  say(
    c.dim(
      `watching ${dir} — save to publish; \`platform jobs run <name>\` runs a job; Ctrl-C stops${local ? ' (and the local platform)' : ''}`,
    ),
  );

  // the app's events as they happen, from now on
  const page = (extra: { limit?: string; cursor?: string }) =>
    api.request('GET /v0/apps/{app_id}/events', {
      params: { app_id: appId! },
      query: { ...extra },
    });
  while (!appId && !stopping) await new Promise((r) => setTimeout(r, 200));
  if (stopping) return;
  eventsFrom ??= await newestEvent(appId!);
  await followEvents(
    page,
    (events) => {
      for (const e of [...events].reverse()) {
        const line = formatEvent(e);
        if (line) say(line);
      }
    },
    {
      after: eventsFrom.id,
      intervalMs: 200,
      stopped: () => stopping,
      onError: () => {},
    },
  );
}
