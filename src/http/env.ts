import type { Membership } from '../accounts/queries.ts';
import type { AppRow } from '../apps/queries.ts';
import type { Deps } from '../deps.ts';

/** The authenticated platform user behind a request: an API key, or a console session on the console host. */
export type Actor = {
  userId: string;
  email: string;
  apiKeyId: string | null;
  keyPrefix: string | null;
  defaultAccountId: string | null;
  /** the console session, when the request came with the session cookie instead of a key */
  session?: { id: string; csrfToken: string; expiresAt: Date } | null;
};

/** Hono environment shared by every router. */
export type Env = {
  Variables: {
    requestId: string;
    deps: Deps;
    actor: Actor;
    /** Parsed and validated request body / query, set by the validators in validate.ts. */
    body: unknown;
    query: unknown;
    /** The app named by `:app_id`, loaded and authorised by `appAccess()`. */
    app: AppRow;
    membership: Membership;
  };
};
