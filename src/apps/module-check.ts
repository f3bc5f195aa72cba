/**
 * Loading a server module at publish: ok with the handlers it offers (`fetch`, `job`, `webhook`,
 * whichever entry shape gives them), or why it does not load. The app origin's sandbox does it
 * (`origin/plane.ts`); publishing asks (`apps/service.ts`).
 */
export type ModuleCheckResult =
  | { ok: true; handlers: string[] }
  | { ok: false; error: string; stack?: string };

export type ModuleCheck = (input: {
  appId: string;
  planKey: string;
  entry: string;
  sources: Record<string, string>;
}) => Promise<ModuleCheckResult>;
