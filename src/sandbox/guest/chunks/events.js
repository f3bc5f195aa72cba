// Event, EventTarget and CustomEvent (event-target-shim), AbortController and AbortSignal (with
// timeout, any, abort and throwIfAborted) on top of them, and DOMException.
import { defineEventAttribute, Event, EventTarget } from 'event-target-shim';

const CODES = {
  IndexSizeError: 1,
  HierarchyRequestError: 3,
  WrongDocumentError: 4,
  InvalidCharacterError: 5,
  NoModificationAllowedError: 7,
  NotFoundError: 8,
  NotSupportedError: 9,
  InvalidStateError: 11,
  SyntaxError: 12,
  InvalidModificationError: 13,
  NamespaceError: 14,
  InvalidAccessError: 15,
  TypeMismatchError: 17,
  SecurityError: 18,
  NetworkError: 19,
  AbortError: 20,
  URLMismatchError: 21,
  QuotaExceededError: 22,
  TimeoutError: 23,
  InvalidNodeTypeError: 24,
  DataCloneError: 25,
};

class DOMException extends Error {
  constructor(message = '', name = 'Error') {
    super(String(message));
    Object.defineProperty(this, 'name', {
      value: String(name),
      configurable: true,
      writable: true,
    });
  }
  get code() {
    return CODES[this.name] ?? 0;
  }
}
for (const [name, code] of Object.entries(CODES)) {
  const constant = name
    .replace(/([a-z])([A-Z])/g, '$1_$2')
    .toUpperCase()
    .replace(/_ERROR$/, '_ERR');
  Object.defineProperty(DOMException, constant, { value: code, enumerable: true });
}

class CustomEvent extends Event {
  constructor(type, init) {
    super(type, init);
    this._detail = init && init.detail !== undefined ? init.detail : null;
  }
  get detail() {
    return this._detail;
  }
}

const ABORT = Symbol('abort');
const FIRE = Symbol('fire');
class AbortSignal extends EventTarget {
  constructor(key) {
    if (key !== ABORT) throw new TypeError('Illegal constructor: use new AbortController().signal');
    super();
    this._aborted = false;
    this._reason = undefined;
    // AbortSignal.any()'s bookkeeping, as the DOM standard has it: a dependent signal follows
    // the signals that are not themselves dependent, which hold it weakly
    this._dependent = false;
    this._sources = [];
    this._dependents = new Set();
  }
  get aborted() {
    return this._aborted;
  }
  get reason() {
    return this._reason;
  }
  throwIfAborted() {
    if (this._aborted) throw this._reason;
  }
  [ABORT](reason) {
    if (this._aborted) return;
    this._aborted = true;
    this._reason =
      reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
    // dependents are aborted (reason set) before any event fires, and fire after this one
    const follow = [];
    for (const ref of this._dependents) {
      const d = ref.deref();
      if (!d || d._aborted) continue;
      d._aborted = true;
      d._reason = this._reason;
      follow.push(d);
    }
    this._dependents.clear();
    this[FIRE]();
    for (const d of follow) d[FIRE]();
  }
  [FIRE]() {
    this.dispatchEvent(new Event('abort'));
  }
  static abort(reason) {
    const s = new AbortSignal(ABORT);
    s[ABORT](reason);
    return s;
  }
  static timeout(ms) {
    const s = new AbortSignal(ABORT);
    setTimeout(
      () => s[ABORT](new DOMException('The operation timed out.', 'TimeoutError')),
      Number(ms),
    );
    return s;
  }
  static any(signals) {
    const s = new AbortSignal(ABORT);
    const list = Array.from(signals);
    for (const other of list) {
      if (!(other instanceof AbortSignal))
        throw new TypeError('AbortSignal.any: not an AbortSignal');
      if (other.aborted) {
        s[ABORT](other.reason);
        return s;
      }
    }
    s._dependent = true;
    const ref = new WeakRef(s);
    const sweep = (source) => {
      // a long-lived source (a server-wide signal) keeps no references to collected dependents
      if (source._dependents.size > 64)
        for (const r of source._dependents) if (!r.deref()) source._dependents.delete(r);
    };
    for (const other of list) {
      for (const source of other._dependent ? other._sources : [other]) {
        if (s._sources.includes(source)) continue;
        s._sources.push(source);
        sweep(source);
        source._dependents.add(ref);
      }
    }
    return s;
  }
}
defineEventAttribute(AbortSignal.prototype, 'abort');

class AbortController {
  constructor() {
    this._signal = new AbortSignal(ABORT);
  }
  get signal() {
    return this._signal;
  }
  abort(reason) {
    this._signal[ABORT](reason);
  }
}

/** @param {{ define: (name: string, value: unknown) => void }} platform */
export default function install(platform) {
  platform.define('Event', Event);
  platform.define('EventTarget', EventTarget);
  platform.define('CustomEvent', CustomEvent);
  platform.define('AbortController', AbortController);
  platform.define('AbortSignal', AbortSignal);
  platform.define('DOMException', DOMException);
}
