// `cloudflare:workers` for a project whose wrangler config binds no Durable Object: its
// `DurableObject` classes (OpenNext's optional caches, say) are exported but never instantiated
// here, so the base class only has to exist. A config that binds one is refused at publish.
export * from './cloudflare-workers.js';

export class DurableObject {
  constructor(ctx, env) {
    this.ctx = ctx;
    this.env = env;
  }
}
