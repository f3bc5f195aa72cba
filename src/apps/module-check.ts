import type { Manifest } from '../manifest/schema.ts';
import type { Bindings } from '../bindings/declared.ts';

/**
 * Loading a server module at publish: ok with the handlers it offers (`fetch`, `job`, `webhook`,
 * whichever entry shape gives them), or why it does not load. The app origin's sandbox does it
 * (`runtime/node-runtime.ts`); publishing asks (`apps/service.ts`).
 */
export type ModuleCheckResult =
  | {
      ok: true;
      handlers: string[];
      /** The modules as the engine's bytecode and the engine build that made it (releases/bytecode.ts). */
      bytecode?: { engine: string; pack: Uint8Array };
    }
  | { ok: false; error: string; stack?: string };

export type ModuleCheck = {
  (input: {
    appId: string;
    planKey: string;
    entry: string;
    sources: Record<string, string>;
    /**
     * The release the module is published as: the instance that loaded it is kept as that
     * release's first warm one (set up as a call of it would be: its ctx flags, the app's
     * secrets), so the first request after a publish does not load the module again.
     */
    keepAs?: { releaseId: string; manifest: Manifest; bindings: Bindings };
    /** Also compile the modules to bytecode, where the engine can (releases/bytecode.ts). */
    compile?: boolean;
  }): Promise<ModuleCheckResult>;
  /** Drops the instance a check kept for a release that did not go live. */
  discard?(releaseId: string): void;
};

/**
 * What the manifest declares that the module has no handler for, one sentence each. A publish that
 * asks for it (`require_handlers=true`, the CLI's default) does not go live with any of them; the
 * contract keeps handlers optional otherwise (`job.blocked`, `webhook.handler_missing`).
 */
export function missingHandlers(manifest: Manifest, handlers: readonly string[]): string[] {
  const has = new Set(handlers);
  const missing: string[] = [];
  if (manifest.runtime.fallback === 'server' && !has.has('fetch'))
    missing.push(
      'no fetch handler, and runtime.fallback is "server": the server module must export default { fetch }',
    );
  const jobs = Object.keys(manifest.resources?.jobs ?? {});
  if (jobs.length && !has.has('job'))
    missing.push(
      `no job handler for the declared ${jobs.length === 1 ? 'job' : 'jobs'} ${jobs.join(', ')}: the server module must export default { job }`,
    );
  const hooks = Object.entries(manifest.resources?.webhooks ?? {})
    .filter(([, w]) => (w.deliver_to ?? 'server') === 'server')
    .map(([name]) => name);
  if (hooks.length && !has.has('webhook'))
    missing.push(
      `no webhook handler for ${hooks.length === 1 ? 'webhook' : 'webhooks'} ${hooks.join(', ')}, delivered to the server: the server module must export default { webhook }`,
    );
  return missing;
}
