// What code written for other hosts reaches for, over the platform's own parts (loaded on first use):
// - `addEventListener('fetch' | 'scheduled', ...)`: the service-worker syntax of Workers and Deno;
// - `Deno.serve(handler)` and `Deno.env`; `process.env` (Node, Vercel, Netlify, Val Town).
// Environment variables are the app's secrets, as `ctx.secrets.get` reads them; a write stays in the instance.
// `process` has `env`, `nextTick`, `cwd`, `hrtime` and Node's listener methods: no `versions.node`, so libraries do not
// take Node-only paths.

/** @param {{ define: (name: string, value: unknown) => void, load: (chunk: string) => void, internals: any, secret: (name: string) => string | undefined }} platform */
export default function install(platform) {
  const entry = (platform.internals.entry = { fetch: [], scheduled: [], serve: null });
  const NAME = /^[A-Z][A-Z0-9_]{0,63}$/;

  platform.define('addEventListener', function addEventListener(type, listener) {
    if (typeof listener !== 'function' && !(listener && typeof listener.handleEvent === 'function'))
      return;
    const fn = typeof listener === 'function' ? listener : (e) => listener.handleEvent(e);
    if (type === 'fetch') entry.fetch.push(fn);
    else if (type === 'scheduled') entry.scheduled.push(fn);
  });
  platform.define('removeEventListener', function removeEventListener() {});

  // Writes stay in this instance, as on Node, Deno and Workers (Next.js sets its own variables at
  // load): they shadow a secret for `process.env` and `Deno.env` here, never the secret itself.
  const written = new Map();
  const read = (name) => {
    if (written.has(name)) return written.get(name);
    if (NAME.test(name)) {
      const v = platform.secret(name);
      if (v !== undefined) return v;
    }
    return name === 'NODE_ENV' ? 'production' : undefined;
  };
  const env = Object.freeze({
    get(name) {
      return read(String(name));
    },
    has(name) {
      return read(String(name)) !== undefined;
    },
    set(name, value) {
      written.set(String(name), String(value));
    },
    delete(name) {
      written.set(String(name), undefined);
    },
    toObject() {
      return {};
    },
  });
  platform.define(
    'Deno',
    Object.freeze({
      env,
      // Deno KV over the platform's store: one database per app (the path argument names none here)
      openKv() {
        platform.load('deno-kv');
        return Promise.resolve(platform.internals.denoKv.open());
      },
      get KvU64() {
        platform.load('deno-kv');
        return platform.internals.denoKv.KvU64;
      },
      serve(a, b) {
        const handler =
          typeof a === 'function' ? a : a && typeof a.handler === 'function' ? a.handler : b;
        if (typeof handler !== 'function')
          throw new TypeError('Deno.serve needs a handler function');
        entry.serve = handler;
        return Object.freeze({
          finished: new Promise(() => {}),
          addr: { transport: 'tcp', hostname: '0.0.0.0', port: 443 },
          shutdown: () => Promise.resolve(),
          ref() {},
          unref() {},
        });
      },
    }),
  );

  const processEnv = new Proxy(
    {},
    {
      get(_t, name) {
        return typeof name === 'string' ? read(name) : undefined;
      },
      has(_t, name) {
        return typeof name === 'string' && read(name) !== undefined;
      },
      set(_t, name, value) {
        if (typeof name !== 'string') return false;
        written.set(name, String(value));
        return true;
      },
      deleteProperty(_t, name) {
        if (typeof name === 'string') written.set(name, undefined);
        return true;
      },
    },
  );
  platform.define('process', nodeProcess(processEnv));
}

/**
 * `process`: `env`, `nextTick`, and Node's listener methods (Next.js wraps them at load to filter
 * `unhandledRejection`). The platform emits no process events; `emit` calls what the app added.
 * Not frozen: libraries patch these methods, as they may on Node.
 */
function nodeProcess(env) {
  const listeners = new Map();
  const list = (type) => {
    let l = listeners.get(type);
    if (!l) listeners.set(type, (l = []));
    return l;
  };
  const adder = (front, once) =>
    function (type, fn) {
      const l = list(type);
      if (front) l.unshift({ fn, once });
      else l.push({ fn, once });
      return p;
    };
  let cwd = '/';
  const started = performance.now();
  const hrtime = (prev) => {
    const ns = Math.round((performance.now() - started) * 1e6);
    const t = [Math.floor(ns / 1e9), ns % 1e9];
    if (!prev) return t;
    const d = (t[0] - prev[0]) * 1e9 + (t[1] - prev[1]);
    return [Math.floor(d / 1e9), d % 1e9];
  };
  hrtime.bigint = () => BigInt(Math.round((performance.now() - started) * 1e6));
  const p = {
    env,
    nextTick(fn, ...args) {
      queueMicrotask(() => fn(...args));
    },
    // what bundled server code reads of a Workers `process` (Next.js resolves paths from cwd);
    // no `versions` or `version`, so no library takes the sandbox for Node
    platform: '',
    argv: [],
    argv0: '',
    execArgv: [],
    cwd: () => cwd,
    chdir(dir) {
      cwd = String(dir);
    },
    hrtime,
    uptime: () => (performance.now() - started) / 1000,
    emitWarning(warning) {
      console.warn(typeof warning === 'string' ? `Warning: ${warning}` : warning);
    },
    exit() {
      throw new Error('process.exit() is not available on this platform');
    },
    on: adder(false, false),
    once: adder(false, true),
    prependListener: adder(true, false),
    prependOnceListener: adder(true, true),
    off(type, fn) {
      const l = list(type);
      const i = l.findLastIndex((e) => e.fn === fn);
      if (i >= 0) l.splice(i, 1);
      return p;
    },
    removeAllListeners(type) {
      if (type === undefined) listeners.clear();
      else listeners.delete(type);
      return p;
    },
    listeners(type) {
      return list(type).map((e) => e.fn);
    },
    listenerCount(type) {
      return list(type).length;
    },
    emit(type, ...args) {
      const l = list(type).slice();
      for (const e of l) {
        if (e.once) p.off(type, e.fn);
        e.fn.apply(p, args);
      }
      return l.length > 0;
    },
  };
  p.addListener = p.on;
  p.removeListener = p.off;
  return p;
}
