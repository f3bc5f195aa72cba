/**
 * What every `/_platform/*` router sees: the request's app and live release, resolved by the origin
 * before dispatch and handed over as Hono bindings (`c.env`), plus values its middleware sets.
 */
import type { AppUser } from '../../app-auth/service.ts';
import type { DataTarget } from '../../data/service.ts';
import type { CollectionSpec } from '../../manifest/resources.ts';
import type { Deps } from '../../deps.ts';
import type { LiveApp, ReleaseView, RuntimeCaches } from '../../releases/live.ts';
import type { SandboxPool } from '../../sandbox/pool.ts';
import type { HttpCache } from '../../runtime/http-cache.ts';

export type OriginServices = {
  caches: RuntimeCaches;
  sandbox: () => SandboxPool;
  httpCache?: HttpCache | undefined;
};

export type PlatformRequest = OriginServices & {
  deps: Deps;
  app: LiveApp;
  release: ReleaseView;
  requestId: string;
  /** the peer address, for per-client rate limits */
  client: string;
};

export type OriginEnv = {
  Bindings: PlatformRequest;
  Variables: {
    /** `/_platform/data/:collection`: the declared collection and what this caller may touch */
    collection: { name: string; spec: CollectionSpec; target: DataTarget; user: AppUser | null };
  };
};
