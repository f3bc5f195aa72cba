/**
 * Cloudflare's own modules in server code. `cloudflare:workers` is bundled from
 * ./node-compat/cloudflare-workers.js (`env`, `waitUntil`, `WorkerEntrypoint`); what has no
 * counterpart here (`WorkflowEntrypoint`, `cloudflare:sockets`, ...) stops the build with one line
 * naming it. `DurableObject` is a base class when the wrangler config binds none (the classes are
 * exported and never made); a config that binds one is refused before the build (wrangler-config.ts).
 */
import { fileURLToPath } from 'node:url';
import type { Message, Plugin } from 'esbuild';

const here = (f: string) => fileURLToPath(new URL(f, import.meta.url));
const WORKERS = here('./node-compat/cloudflare-workers.js');
/** with an inert `DurableObject` base class, for a project that binds none (a class exported, never made) */
const WORKERS_UNBOUND = here('./node-compat/cloudflare-workers-unbound.js');

/** The exports of `cloudflare:workers` that have no counterpart here, and why. */
const NOT_HERE: Record<string, string> = {
  DurableObject:
    'Durable Objects are not available here yet: keep state in a data collection (ctx.data)',
  WorkflowEntrypoint: 'Workflows are not available here: run the steps as jobs (ctx.jobs.enqueue)',
  RpcTarget: 'RPC between Workers is not available here: call the other app over fetch()',
};
const OTHER_MODULES: Record<string, string> = {
  'cloudflare:sockets': 'there are no TCP sockets here: use fetch()',
  'cloudflare:email': 'e-mail Workers are not available here',
  'cloudflare:workflows':
    'Workflows are not available here: run the steps as jobs (ctx.jobs.enqueue)',
  'cloudflare:ai': 'Workers AI is not available here',
};

export type CloudflareModulesOptions = {
  /** the wrangler config binds no Durable Object: `DurableObject` is a base class never instantiated */
  inertDurableObjects?: boolean;
};

export function cloudflareModules(options: CloudflareModulesOptions = {}): Plugin {
  return {
    name: 'platform-cloudflare-modules',
    setup(build) {
      build.onResolve({ filter: /^cloudflare:/ }, (args) => {
        if (args.path === 'cloudflare:workers')
          return { path: options.inertDurableObjects ? WORKERS_UNBOUND : WORKERS };
        const why = OTHER_MODULES[args.path];
        return {
          errors: [{ text: `"${args.path}" is not available here${why ? `: ${why}` : ''}.` }],
        };
      });
    },
  };
}

/** esbuild's "No matching export" for a `cloudflare:workers` import, as what it means here. */
export function explainCloudflareExport(m: Message): Message {
  const missing =
    /^No matching export in ".*cloudflare-workers(-unbound)?\.js" for import "(\w+)"$/.exec(m.text);
  if (!missing) return m;
  const name = missing[2]!;
  return {
    ...m,
    text: `${name} from "cloudflare:workers" is not available here: ${NOT_HERE[name] ?? 'the platform offers env, waitUntil and WorkerEntrypoint from it'}.`,
  };
}
