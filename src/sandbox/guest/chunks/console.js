// console: a part of the prelude loaded on first use. Arguments cross to the host structured, so the
// host redacts secrets inside objects before it formats them.

/** @param {{ define: (name: string, value: unknown) => void, provide: (name: string, value: unknown) => void, internals: any }} platform */
export default function install(platform) {
  const { hostConsole } = platform.internals;
  const fmt = (args) =>
    Array.prototype.map
      .call(args, (a) => {
        if (typeof a === 'string') return a;
        if (a instanceof Error)
          return a.stack ? a.name + ': ' + a.message + '\n' + a.stack : a.name + ': ' + a.message;
        try {
          const j = JSON.stringify(a);
          return j === undefined ? String(a) : j;
        } catch (_e) {
          return String(a);
        }
      })
      .join(' ');
  const consoleParts = (args) =>
    Array.prototype.map.call(args, (a) => {
      if (typeof a === 'string') return a;
      if (a instanceof Error)
        return a.stack ? a.name + ': ' + a.message + '\n' + a.stack : a.name + ': ' + a.message;
      if (a === null || typeof a === 'object') return { $v: a };
      return String(a);
    });
  const console = {};
  for (const [name, level] of [
    ['log', 'info'],
    ['info', 'info'],
    ['debug', 'debug'],
    ['trace', 'debug'],
    ['warn', 'warn'],
    ['error', 'error'],
  ]) {
    console[name] = function () {
      let json;
      try {
        json = JSON.stringify(consoleParts(arguments));
      } catch (_e) {
        json = JSON.stringify([fmt(arguments)]);
      }
      hostConsole(level, json);
    };
  }
  platform.provide('console', console);
  platform.define('console', console);
}
