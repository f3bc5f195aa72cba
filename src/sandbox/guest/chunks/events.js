// Event, EventTarget and CustomEvent (event-target-shim), AbortController and AbortSignal (with
// timeout, any, abort and throwIfAborted) on top of them, and DOMException.
import { Event, EventTarget } from 'event-target-shim';

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
class AbortSignal extends EventTarget {
  constructor(key) {
    if (key !== ABORT) throw new TypeError('Illegal constructor: use new AbortController().signal');
    super();
    this._aborted = false;
    this._reason = undefined;
    this.onabort = null;
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
    const event = new Event('abort');
    if (typeof this.onabort === 'function') this.onabort.call(this, event);
    this.dispatchEvent(event);
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
    for (const other of signals) {
      if (other.aborted) {
        s[ABORT](other.reason);
        return s;
      }
    }
    for (const other of signals)
      other.addEventListener('abort', () => s[ABORT](other.reason), { once: true });
    return s;
  }
}

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
