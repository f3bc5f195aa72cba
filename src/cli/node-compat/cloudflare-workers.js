// `cloudflare:workers` over the platform (bundled into server code by src/cli/cloudflare-modules.ts).
// `env` is the instance's env (what a Workers handler gets as its second argument: secrets by name,
// ASSETS); `waitUntil` extends the call whose handler is running; `WorkerEntrypoint` is the class a
// default export may extend. What the platform cannot offer is refused at publish, by name.
const G = globalThis;
const current = () => G.__workersEnv;

export const env = new Proxy(
  {},
  {
    get: (_t, k) => {
      const e = current();
      return e ? e[k] : undefined;
    },
    has: (_t, k) => {
      const e = current();
      return e ? k in e : false;
    },
  },
);

export function waitUntil(promise) {
  const exec = typeof G.__workersExec === 'function' ? G.__workersExec() : null;
  if (!exec)
    throw new Error(
      'waitUntil() from cloudflare:workers works while a request, job or webhook runs',
    );
  exec.waitUntil(promise);
}

export class WorkerEntrypoint {
  constructor(ctx, env) {
    this.ctx = ctx;
    this.env = env;
  }
}
