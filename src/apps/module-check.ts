import type { Manifest } from '../manifest/schema.ts';

/**
 * Loading a server module at publish: ok with the handlers it offers (`fetch`, `job`, `webhook`,
 * whichever entry shape gives them), or why it does not load. The app origin's sandbox does it
 * (`origin/plane.ts`); publishing asks (`apps/service.ts`).
 */
export type ModuleCheckResult =
  | { ok: true; handlers: string[] }
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
    keepAs?: { releaseId: string; manifest: Manifest };
  }): Promise<ModuleCheckResult>;
  /** Drops the instance a check kept for a release that did not go live. */
  discard?(releaseId: string): void;
};
