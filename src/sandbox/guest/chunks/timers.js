// setTimeout, setInterval and their clear functions: a part of the prelude loaded on first use. The
// host keeps the real timers (bounded by the call's wall time) and fires each through `__fireTimer`,
// in the async context the timer was set in.

/** @param {{ define: (name: string, value: unknown) => void, internals: any }} platform */
export default function install(platform) {
  const { setTimer, clearTimer: hostClear, asyncContext } = platform.internals;
  const timers = new Map();
  let nextTimer = 1;
  const addTimer = (fn, ms, args, repeat) => {
    if (typeof fn !== 'function') throw new TypeError('timer callback must be a function');
    const id = nextTimer++;
    const delay = Math.max(0, Number(ms) || 0);
    // the callback runs in the async context it was set in (AsyncLocalStorage across timers)
    timers.set(id, { fn, args, repeat, ms: delay, context: asyncContext.snapshot() });
    setTimer(id, delay);
    return id;
  };
  const clear = (id) => {
    if (timers.delete(id)) hostClear(id);
  };
  platform.define('__fireTimer', (id) => {
    const t = timers.get(id);
    if (!t) return;
    if (t.repeat) setTimer(id, t.ms);
    else timers.delete(id);
    asyncContext.runInSnapshot(t.context, t.fn, undefined, t.args);
  });
  platform.define('setTimeout', function setTimeout(fn, ms) {
    return addTimer(fn, ms, Array.prototype.slice.call(arguments, 2), false);
  });
  platform.define('setInterval', function setInterval(fn, ms) {
    return addTimer(fn, ms, Array.prototype.slice.call(arguments, 2), true);
  });
  platform.define('clearTimeout', function clearTimeout(id) {
    clear(id);
  });
  platform.define('clearInterval', function clearInterval(id) {
    clear(id);
  });
}
