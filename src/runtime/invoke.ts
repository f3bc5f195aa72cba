/**
 * One way into a release's server code, whatever started the call (a request, a job, a webhook):
 * the sandbox invocation with the release's flags, sources, secrets and platform calls bound to it.
 */
import { appOrigin } from '../apps/mappers.ts';
import type { Deps } from '../deps.ts';
import { readAsset } from './assets.ts';
import { hostCallsFor } from './host-calls.ts';
import type { HttpCache } from './http-cache.ts';
import { sandboxFlags, type ReleaseView, type RuntimeCaches } from '../releases/live.ts';
import { BYTECODE_MIN_SOURCE_BYTES, readBytecode } from '../releases/bytecode.ts';
import { isServerSource } from '../manifest/stored.ts';
import { engineBuildId } from '../sandbox/engine.ts';
import type { SandboxPool } from '../sandbox/pool.ts';
import type { CallRequest, Invocation, InvocationResult } from '../sandbox/protocol.ts';
import { addUsage } from '../usage/counters.ts';
import { planOf } from '../plans/catalogue.ts';
import { mapReleaseStack } from '../source-maps/release-maps.ts';
import { scrubString, secretForms } from '../sandbox/redact.ts';

export type ReleaseServices = {
  caches: RuntimeCaches;
  sandbox: () => SandboxPool;
  /** the origin's shared cache, behind app code's Cache API (`caches.default`) */
  httpCache?: HttpCache | undefined;
};

export type ReleaseCall = {
  handler: Invocation['handler'];
  /** The app and its account's plan (its `server.cpu_ms.max` is the call's CPU limit). */
  app: { appId: string; accountId: string; planKey: string };
  /** A live release with a `server_entry` (callers check). */
  release: ReleaseView;
  request: CallRequest;
  /** The JSON event for `job` and `webhook` handlers. */
  event?: string;
  /** The request this call serves, for the events its platform calls record. */
  requestId?: string;
  /** The origin app code sees (defaults to the app's own). */
  origin?: string;
};

/** How an instance of a release sets up its ctx: what the release declares, and the operator's country header. */
export function instanceFlags(
  deps: Deps,
  release: { manifest: ReleaseView['manifest']; bindings?: ReleaseView['bindings'] },
) {
  const flags = sandboxFlags(release);
  const countryHeader = deps.config.sandbox.countryHeader;
  return countryHeader ? { ...flags, countryHeader } : flags;
}

export async function invokeRelease(
  deps: Deps,
  services: ReleaseServices,
  call: ReleaseCall,
): Promise<InvocationResult> {
  const { app, release } = call;
  const sandbox = services.sandbox();
  // A release no worker holds needs its sources: read them beside the secrets, not after.
  const held = sandbox.holds(release.releaseId);
  const sources = held ? undefined : services.caches.sources(release);
  sources?.catch(() => {}); // a failure surfaces when the pool asks for them
  // its pack too (only a cold call reads one: a warm call's loader stays undefined, and costs nothing)
  const loadBytecode = held ? undefined : bytecodeLoader(deps, sandbox, release);
  const secrets = await services.caches.appSecrets(app.appId);
  const background =
    call.handler === 'job' || call.handler === 'webhook' || call.handler === 'queue';
  const wallMs = background ? deps.config.sandbox.backgroundWallMs : deps.config.sandbox.wallMs;
  const deadline = performance.now() + wallMs;
  const result = await sandbox.invoke({
    handler: call.handler,
    flags: instanceFlags(deps, release),
    ...(call.event === undefined ? {} : { event: call.event }),
    app: {
      app_id: app.appId,
      origin: call.origin ?? appOrigin(deps.config, app.appId),
      release_id: release.releaseId,
    },
    release: { releaseId: release.releaseId, entry: release.manifest.runtime.server_entry! },
    loadSources: sourcesLoader(services, release, sources),
    loadBytecode,
    request: call.request,
    secrets,
    limits: {
      cpuMs: planOf(deps.config.plans, app.planKey).limits['server.cpu_ms.max'],
      // a job or a webhook delivery may wait on slow outside APIs longer than a visitor would
      ...(background ? { wallMs: deps.config.sandbox.backgroundWallMs } : {}),
    },
    onHostCall: hostCallsFor(
      deps,
      {
        appId: app.appId,
        accountId: app.accountId,
        releaseId: release.releaseId,
        manifest: release.manifest,
        requestId: call.requestId,
        planKey: app.planKey,
      },
      (pathname, method) => readAsset(services.caches, release, app.accountId, pathname, method),
      services.httpCache?.api,
      deadline,
      release.bindings,
    ),
  });
  countOutbound(deps, app.appId, result.fetches);
  if (result.ok && result.response && result.response.status >= 500) {
    // a streamed 5xx is never sent (the visitor gets the generic answer): its first bytes are
    // read for the owner's event, then it is cancelled
    const line = result.response.stream
      ? await firstLineOfStream(result.response)
      : firstLineOf(result.response);
    if (line) result.statusLine = scrubString(line, secretForms(Object.values(secrets)));
  }
  void result.response?.streamEnd?.then((end) => countOutbound(deps, app.appId, end.fetches));
  // a stack app code logged itself (console.error(err)) names the user's files too
  if (result.logs?.length) await mapLoggedStacks(services.caches, release, result.logs);
  // an error's stack names the user's files when the release carries a source map
  if (result.error?.stack)
    result.error.stack = await mapReleaseStack(services.caches, release, result.error.stack).catch(
      () => result.error!.stack,
    );
  if (result.response?.streamEnd) {
    const ended = result.response.streamEnd;
    result.response.streamEnd = ended.then(async (end) => {
      if (end.logs?.length) await mapLoggedStacks(services.caches, release, end.logs);
      if (end.error?.stack)
        end.error.stack = await mapReleaseStack(services.caches, release, end.error.stack).catch(
          () => end.error!.stack,
        );
      return end;
    });
  }
  return result;
}

/**
 * The pool's `loadSources` for a call: the sources read early, else a read now. Made here, not as an
 * arrow inline in the invocation: under tsx (esbuild's keepNames) an arrow that takes its name from
 * a property is renamed through `Object.defineProperty` each time it is made, on every call.
 */
function sourcesLoader(
  services: ReleaseServices,
  release: ReleaseView,
  early: Promise<Record<string, string>> | undefined,
): () => Promise<Record<string, string>> {
  return () => early ?? services.caches.sources(release);
}

/**
 * The pool's `loadBytecode` for a release no worker holds: the pack this node's engine build made at
 * publish, if any, read at once beside the sources and secrets. A release with little server source
 * has none (BYTECODE_MIN_SOURCE_BYTES): no query is made for it.
 */
function bytecodeLoader(
  deps: Deps,
  sandbox: SandboxPool,
  release: ReleaseView,
): (() => Promise<Uint8Array | undefined>) | undefined {
  const engine = engineBuildId(sandbox.engine);
  if (!engine) return undefined;
  let bytes = 0;
  for (const f of release.files.values())
    if (isServerSource(f.path, f.contentType)) bytes += f.size;
  if (bytes < BYTECODE_MIN_SOURCE_BYTES) return undefined;
  const read = readBytecode(deps.db, release.releaseId, engine);
  read.catch(() => {}); // the pool reads a failure as no pack
  return () => read;
}

/** Adds a call's outbound requests to the app's usage (not waited for: counting never slows an answer). */
function countOutbound(deps: Deps, appId: string, n: number | undefined): void {
  if (!n) return;
  addUsage(deps.db, appId, 'outbound.requests', n).catch((err) =>
    deps.log.error('could not count outbound requests', { app_id: appId, error: String(err) }),
  );
}

/** Log lines that hold a stack frame (`file:line:column`) of a mapped file, rewritten to the user's files. */
async function mapLoggedStacks(
  caches: RuntimeCaches,
  release: ReleaseView,
  logs: { message: string }[],
): Promise<void> {
  for (const l of logs)
    if (/:\d+:\d+\)?$/m.test(l.message))
      l.message =
        (await mapReleaseStack(caches, release, l.message).catch(() => l.message)) ?? l.message;
}

type Answer = NonNullable<InvocationResult['response']>;
const textual = (res: Answer) =>
  /^(text\/|application\/(json|problem\+json|xml))/i.test(
    res.headers.find(([k]) => k.toLowerCase() === 'content-type')?.[1] ?? 'text/plain',
  );

/** How long a streamed 5xx may take to give its first bytes to the event. */
const FIRST_BYTES_MS = 250;

/** The first line of a streamed 5xx's text, from what it sends within FIRST_BYTES_MS; the stream is then cancelled. */
async function firstLineOfStream(res: Answer): Promise<string | null> {
  const stream = res.stream!;
  res.stream = undefined;
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  const deadline = new Promise<null>((r) => setTimeout(r, FIRST_BYTES_MS, null).unref?.());
  try {
    while (textual(res) && bytes < 4096) {
      const next = await Promise.race([reader.read(), deadline]);
      if (!next || next.done) break;
      chunks.push(next.value);
      bytes += next.value.byteLength;
    }
  } catch {
    // a stream that failed gives what it gave
  } finally {
    void reader.cancel().catch(() => {});
  }
  if (!bytes) return null;
  const all = new Uint8Array(bytes);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return lineOf(new TextDecoder().decode(all.subarray(0, 4096)));
}

/** The first line of a non-streamed answer's text (at most 300 characters), or null. */
function firstLineOf(res: InvocationResult['response']): string | null {
  if (!res || res.stream || !textual(res)) return null;
  const text =
    res.text ??
    (res.body ? new TextDecoder().decode(new Uint8Array(res.body).subarray(0, 4096)) : '');
  return lineOf(text);
}

function lineOf(text: string): string | null {
  const line = text
    .replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .find(Boolean);
  return line ? line.slice(0, 300) : null;
}
