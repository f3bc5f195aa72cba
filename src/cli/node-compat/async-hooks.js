// node:async_hooks as the CLI bundles it: AsyncLocalStorage and AsyncResource are the sandbox's
// (src/sandbox/guest/prelude/async-context.js: a store follows `await`, promise callbacks and
// timers where the engine tracks async context), the rest unenv's.
import * as unenv from 'unenv/node/async_hooks';

const own = globalThis[Symbol.for('platform.async_hooks')];
export const AsyncLocalStorage = own ? own.AsyncLocalStorage : unenv.AsyncLocalStorage;
export const AsyncResource = own ? own.AsyncResource : unenv.AsyncResource;
export const {
  asyncWrapProviders,
  createHook,
  executionAsyncId,
  executionAsyncResource,
  triggerAsyncId,
} = unenv;
export default {
  ...unenv.default,
  AsyncLocalStorage,
  AsyncResource,
};
