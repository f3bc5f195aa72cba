/**
 * Instances and module loading: one QuickJS runtime per release (own heap, memory and stack caps),
 * kept warm in an LRU bounded by their measured memory (`instanceBudgetBytes`), made from a blank instance (host functions installed,
 * prelude evaluated) kept ready in advance. Release modules import only their own files.
 */
import { onDeno } from '../lib/on-deno.ts';
import { OWN_ENGINE_STACK_FACTOR } from './engine-variant.ts';
import { INSTANCE_BYTES, INSTANCES, SPARE_READY, WASM_BYTES } from './shared-state.ts';
import type { Invocation } from './protocol.ts';
import { installHost, type HostHooks } from './host-functions.ts';
import {
  errorText,
  installInterrupt,
  isPoison,
  JobFailure,
  loadBudgetMs,
  runJobs,
  segment,
  usedBytes,
} from './limits.ts';
import { compileModules, evalModules, hasModuleBytecode } from './module-bytecode.ts';
import { evalPlatformScript } from './script-bytecode.ts';
import { LoadError, Poisoned, type Call, type Instance, type WorkerState } from './worker-state.ts';

/** A normaliser result that makes the loader fail with this message (its own errors lose theirs). */
const DENIED = '\u0001denied:'; // control characters never occur in release paths; NUL would end the C string
/** How long the worker must have been idle before it makes the next spare (bench:apps measures what it takes). */
const QUIET_MS = 1;
const MAX_SPARE_DELAY_MS = 1000;

/** Resolves `requested` from the module `base` inside the release, or a DENIED message. */
/**
 * QuickJS counts its stack in WASM linear memory, but each guest frame is also native frames on the
 * thread's own stack, which must not run out first (a V8 RangeError escaping the WASM poisons the
 * whole worker, not one call). Node gives a worker thread 4 MiB and V8 nearly all of it; Deno's
 * workers have 4 MiB too, its V8 uses larger frames for code not yet optimised, and it takes the
 * limit from `--v8-flags=--stack-size` (deno.json): there the guest gets three quarters of its
 * stack, measured to fail the call cleanly in a cold worker (docs/decisions/deno.md).
 */
/**
 * The engine's stack limit for an instance's `stackBytes`. The platform's build checks its own C
 * stack, which a JavaScript call uses about a quarter as much of as the stock build's V8-side
 * frames; it gets four times the bytes so apps recurse as deep (about 7,700 plain calls at the
 * default 512 KiB) and the sandbox thread's native stack is sized for it (pool.ts).
 */
function guestStackBytes(state: WorkerState, bytes: number): number {
  // a Deno worker's native stack cannot be raised: there the build gets a quarter of the bytes,
  // which leaves room for the larger frames of not yet optimized WebAssembly
  if (state.engine === 'own') return onDeno ? bytes / 4 : bytes * OWN_ENGINE_STACK_FACTOR;
  return onDeno ? Math.floor((bytes * 3) / 4) : bytes;
}

function resolveImport(sources: Record<string, string>, base: string, requested: string): string {
  if (!requested.startsWith('./') && !requested.startsWith('../')) {
    return `${DENIED}Cannot import "${requested}": only relative imports of release files are allowed (no host modules, no packages)`;
  }
  const baseDir = base.includes('/') ? base.slice(0, base.lastIndexOf('/') + 1) : '';
  const parts: string[] = [];
  for (const seg of (baseDir + requested).split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (!parts.length) return `${DENIED}Cannot import "${requested}": it leaves the release`;
      parts.pop();
    } else parts.push(seg);
  }
  const resolved = parts.join('/');
  if (!(resolved in sources))
    return `${DENIED}Cannot find module "${requested}" (resolved to ${resolved}) in this release`;
  return resolved;
}

export type Instances = ReturnType<typeof createInstances>;

export function createInstances(state: WorkerState, hooks: HostHooks) {
  const live = new Map<string, Instance>();
  let spare: Instance | undefined;
  /** Whether the spare also holds the parts of the platform most apps use (`preload`). */
  let sparePreloaded = false;
  let spareTimer: ReturnType<typeof setTimeout> | undefined;
  /** The pool reads `SPARE_READY` to send a release new to every worker where a spare waits. */
  const setSpare = (inst: Instance | undefined) => {
    spare = inst;
    sparePreloaded = false;
    state.shared[SPARE_READY] = inst ? 1 : 0;
  };

  /**
   * A runtime with the host functions installed and the prelude evaluated, for no app yet.
   * Compiling the prelude is most of what a new instance costs, so one blank instance is kept ready
   * and a release's first request takes it.
   */
  function blank(limits: { memoryBytes: number; stackBytes: number }): Instance {
    const runtime = state.quickjs.newRuntime({
      memoryLimitBytes: limits.memoryBytes,
      maxStackSizeBytes: guestStackBytes(state, limits.stackBytes),
    });
    const context = runtime.newContext();
    const inst: Instance = {
      releaseId: '',
      dispatch: context.undefined,
      runtime,
      context,
      handlers: context.undefined,
      current: undefined,
      timers: new Map(),
      inflight: 0,
      cpuSinceMeasureMs: 0,
      measuredAtWasmBytes: 0,
      usedBytes: 0,
    };
    installInterrupt(inst);
    installHost(state, inst, hooks);
    // The prelude is platform code, not guest code: no app's budget applies to it.
    const prelude = evalPlatformScript(context, state.prelude, '<platform prelude>');
    if (prelude.error) {
      const e = errorText(context, prelude.error);
      prelude.error.dispose();
      dispose(inst);
      throw new Error(`prelude failed: ${e.message}`);
    }
    prelude.value.dispose();
    return inst;
  }

  /**
   * Loads the platform parts that are chunks only to keep the prelude small (URLSearchParams,
   * console, timers, crypto; `__preload` in the prelude) into the spare, as every instance had them
   * before: an app's first call does not compile them then.
   */
  function preload(inst: Instance): void {
    const { context } = inst;
    using fn = context.getProp(context.global, '__preload');
    const r = context.callFunction(fn, context.undefined);
    if (r.error) {
      const e = errorText(context, r.error);
      r.error.dispose();
      throw new Error(`preload failed: ${e.message}`);
    }
    r.value.dispose();
    sparePreloaded = true;
  }

  /**
   * Makes the next blank instance as soon as the worker is idle (no message for `QUIET_MS`), so the
   * time it takes lands between requests; under steady traffic, after a second anyway. Then, once
   * the worker is idle again, preloads it: when cold starts queue up, the next one takes
   * the spare before that, and compiles only the parts its app touches. Meanwhile the pool sends
   * releases new to every worker to another worker whose spare is ready (`SPARE_READY`), so a run of
   * cold starts alternates between ready workers (`npm run bench:apps`).
   */
  function refillSpare(): void {
    if ((spare && sparePreloaded) || spareTimer || state.poisoned) return;
    const wanted = performance.now();
    const attempt = () => {
      spareTimer = undefined;
      if ((spare && sparePreloaded) || state.poisoned) return;
      const now = performance.now();
      if (now - state.lastActivity < QUIET_MS && now - wanted < MAX_SPARE_DELAY_MS) {
        spareTimer = setTimeout(attempt, QUIET_MS);
        return;
      }
      state.outbox.flush();
      if (spare) {
        preload(spare);
        return;
      }
      setSpare(blank(state.spareLimits));
      refillSpare();
    };
    spareTimer = setTimeout(attempt, QUIET_MS);
  }

  /** Release modules import only their own files (`resolveImport`). */
  function setReleaseLoader(runtime: Instance['runtime'], sources: Record<string, string>): void {
    runtime.setModuleLoader(
      (name) => {
        if (name.startsWith(DENIED)) return { error: new Error(name.slice(DENIED.length)) };
        const source = sources[name];
        if (source === undefined)
          return { error: new Error(`Cannot find module "${name}" in this release`) };
        return source;
      },
      (base, requested) => resolveImport(sources, base, requested),
    );
  }

  /**
   * The release's modules compiled to bytecode (module-bytecode.ts), in a runtime of their own with
   * the instance's limits: for the publish-time check to store. Undefined on the stock engine, or
   * when they do not compile there (the release still publishes; its cold starts compile).
   */
  function compile(inv: Invocation): ArrayBuffer | undefined {
    const sources = inv.release.sources;
    const source = sources?.[inv.release.entry];
    if (state.engine !== 'own' || !sources || source === undefined) return undefined;
    const runtime = state.quickjs.newRuntime({
      memoryLimitBytes: inv.limits.memoryBytes,
      maxStackSizeBytes: guestStackBytes(state, inv.limits.stackBytes),
    });
    try {
      const context = runtime.newContext();
      try {
        if (!hasModuleBytecode(context)) return undefined;
        setReleaseLoader(runtime, sources);
        return compileModules(context, inv.release.entry, source).buffer as ArrayBuffer;
      } catch {
        return undefined;
      } finally {
        context.dispose();
      }
    } finally {
      runtime.dispose();
    }
  }

  /** Sets the app's ctx up in a blank instance and evaluates the release's entry module. */
  function load(inst: Instance, inv: Invocation, sources: Record<string, string>): void {
    const { runtime, context } = inst;
    setReleaseLoader(runtime, sources);
    {
      using setApp = context.getProp(context.global, '__setApp');
      using appJson = context.newString(JSON.stringify(inv.app));
      using flags = context.newString(
        JSON.stringify(inv.flags ?? { appUsers: false, publicStores: [] }),
      );
      const set = context.callFunction(setApp, context.undefined, appJson, flags);
      if (set.error) {
        set.error.dispose();
        throw new Error('could not set up ctx');
      }
      set.value.dispose();
    }
    inst.dispatch = context.getProp(context.global, '__dispatch');
    // Loading the module's top-level code has its own, larger budget: a cold worker's first
    // evaluation is slow, but a top-level infinite loop is still stopped.
    const loadCall: Call = {
      inv: { ...inv, limits: { ...inv.limits, cpuMs: loadBudgetMs(inv.limits.cpuMs) } },
      hostCalls: 0,
      logs: [],
      secretsRead: new Set(),
      cpuUsedMs: 0,
      segmentStart: 0,
      segmentCpuStart: 0,
      done: false,
    };
    const entry = inv.release.entry;
    const pack = inv.release.bytecode;
    const loaded = segment(state, inst, loadCall, () => {
      const r =
        pack && hasModuleBytecode(context)
          ? evalModules(context, pack, entry)
          : context.evalCode(sources[entry]!, entry, { type: 'module' });
      runJobs(inst);
      return r;
    });
    if (loaded.error) {
      const e = errorText(context, loaded.error);
      loaded.error.dispose();
      throw new LoadError(e.message, e.stack);
    }
    let ns = loaded.value;
    const promised = context.getPromiseState(ns);
    // a fulfilled promise has `notAPromise` undefined, not false
    if (promised.type !== 'fulfilled' || !promised.notAPromise) {
      // Top-level await: the module namespace arrives through a promise.
      if (promised.type === 'pending') {
        ns.dispose();
        throw new LoadError(
          'The server module is still waiting on top-level await; it must finish loading without timers or I/O.',
        );
      }
      if (promised.type === 'rejected') {
        const e = errorText(context, promised.error);
        promised.error.dispose();
        ns.dispose();
        throw new LoadError(e.message, e.stack);
      }
      if (promised.type === 'fulfilled' && !promised.notAPromise) {
        ns.dispose();
        ns = promised.value;
      }
    }
    // the module's handlers in the contract's shape, whichever host's entry shape it uses
    {
      using handlersOf = context.getProp(context.global, '__handlersOf');
      const h = context.callFunction(handlersOf, context.undefined, ns);
      ns.dispose();
      if (h.error) {
        const e = errorText(context, h.error);
        h.error.dispose();
        throw new LoadError(e.message, e.stack);
      }
      inst.handlers = h.value;
    }
  }

  function create(inv: Invocation): Instance {
    state.spareLimits = { memoryBytes: inv.limits.memoryBytes, stackBytes: inv.limits.stackBytes };
    let inst = spare;
    setSpare(undefined);
    if (inst) {
      inst.runtime.setMemoryLimit(inv.limits.memoryBytes);
      inst.runtime.setMaxStackSize(guestStackBytes(state, inv.limits.stackBytes));
    } else {
      inst = blank(inv.limits);
    }
    refillSpare();
    inst.releaseId = inv.release.releaseId;
    try {
      load(inst, inv, inv.release.sources!);
    } catch (err) {
      dispose(inst);
      if (err instanceof LoadError) throw err;
      if (err instanceof JobFailure) throw new LoadError(err.message, err.guestStack);
      if (isPoison((err as Error).message)) throw new Poisoned((err as Error).message);
      throw err;
    }
    return inst;
  }

  /** What the pool reads for `/metrics`: the warm instances and what they were last measured to hold. */
  function report(): void {
    let total = 0;
    for (const i of live.values()) total += i.usedBytes;
    state.shared[INSTANCES] = live.size;
    state.shared[INSTANCE_BYTES] = total;
    state.shared[WASM_BYTES] = state.wasmMemory.buffer.byteLength;
  }

  function dispose(inst: Instance): void {
    if (live.get(inst.releaseId) === inst) live.delete(inst.releaseId);
    report();
    for (const t of inst.timers.values()) clearTimeout(t.timer);
    // Guest promises still waiting on the host hold references into the runtime: release them first.
    for (const [id, pending] of state.hostCalls) {
      if (pending.inst !== inst) continue;
      state.hostCalls.delete(id);
      pending.deferred.dispose();
    }
    try {
      if (inst.handlers !== inst.context.undefined) inst.handlers.dispose();
      if (inst.dispatch !== inst.context.undefined) inst.dispatch.dispose();
      inst.fetchKind?.dispose();
      inst.context.dispose();
      inst.runtime.dispose();
    } catch {
      // A runtime that ran out of memory may not dispose cleanly. If no answer told the pool so, the
      // thread ends itself (after sending what is finished) so the pool replaces it and retries the rest.
      if (!state.poisoned) {
        state.poisoned = true;
        setImmediate(() => {
          state.outbox.flush();
          process.exit(70);
        });
      }
    }
  }

  /**
   * Warm instances are bounded by the memory they were measured to hold (the worker's budget),
   * not by count: least recently used idle ones go first; `keep` (the one just made) never does.
   */
  function evictOverBudget(keep: Instance): void {
    let total = 0;
    for (const i of live.values()) total += i.usedBytes;
    if (total <= state.instanceBudgetBytes && live.size <= state.maxInstances) return;
    for (const i of [...live.values()]) {
      if (total <= state.instanceBudgetBytes && live.size <= state.maxInstances) break;
      if (i === keep || i.inflight > 0) continue;
      total -= i.usedBytes;
      dispose(i);
    }
  }

  return {
    /** The release's warm instance (now most recently used), a new one, or 'missing-sources' when the pool must send them. */
    for(inv: Invocation): Instance | 'missing-sources' {
      const existing = live.get(inv.release.releaseId);
      if (existing) {
        live.delete(existing.releaseId);
        live.set(existing.releaseId, existing); // most recently used last
        return existing;
      }
      if (!inv.release.sources) return 'missing-sources';
      const inst = create(inv);
      inst.usedBytes = usedBytes(inst);
      live.set(inst.releaseId, inst);
      evictOverBudget(inst);
      report();
      return inst;
    },
    get(releaseId: string): Instance | undefined {
      return live.get(releaseId);
    },
    compile,
    /** Which of the contract's handlers the loaded module exports. */
    handlerNames(inst: Instance): string[] {
      const names: string[] = [];
      for (const n of ['fetch', 'job', 'webhook', 'queue']) {
        using h = inst.context.getProp(inst.handlers, n);
        if (inst.context.typeof(h) === 'function') names.push(n);
      }
      return names;
    },
    /** Drops the instance from the map only; the whole module goes with the thread. */
    forget(inst: Instance): void {
      live.delete(inst.releaseId);
    },
    /** Takes an instance out of service: new calls get a new one; it is disposed once idle. */
    retire(inst: Instance): void {
      inst.retired = true;
      if (live.get(inst.releaseId) === inst) live.delete(inst.releaseId);
      report();
    },
    /** Disposes a retired instance once no call is running in it (its handles are all released). */
    disposeIfRetired(inst: Instance): void {
      if (inst.retired && inst.inflight === 0 && inst.runtime.alive && !state.poisoned)
        dispose(inst);
    },
    dispose,
    /** Makes the first blank instance (at boot). */
    makeSpare(): void {
      setSpare(blank(state.spareLimits));
      preload(spare!);
    },
  };
}
