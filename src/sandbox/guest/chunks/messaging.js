// MessageChannel, MessagePort and MessageEvent (the HTML standard's channel messaging) within one
// instance: what React's scheduler and other libraries post to themselves to yield a macrotask.
// A message is structured-cloned at the post (the transfer list detaches what it moves) and
// delivered as a task, in order, once the receiving port is started (`start()`, or setting
// `onmessage`); a closed port sends and receives nothing.

const ENTANGLED = Symbol('entangled');
const QUEUE = Symbol('queue');
const STARTED = Symbol('started');
const CLOSED = Symbol('closed');
const HANDLERS = Symbol('handlers');
let constructing = false;

/** @param {{ define: (name: string, value: unknown) => void }} platform */
export default function install(platform) {
  const G = globalThis;
  const { Event, EventTarget } = G;

  class MessageEvent extends Event {
    #data;
    #origin;
    #lastEventId;
    #source;
    #ports;
    constructor(type, init = {}) {
      super(type, init);
      this.#data = init.data === undefined ? null : init.data;
      this.#origin = init.origin === undefined ? '' : String(init.origin);
      this.#lastEventId = init.lastEventId === undefined ? '' : String(init.lastEventId);
      this.#source = init.source ?? null;
      this.#ports = Object.freeze([...(init.ports ?? [])]);
    }
    get data() {
      return this.#data;
    }
    get origin() {
      return this.#origin;
    }
    get lastEventId() {
      return this.#lastEventId;
    }
    get source() {
      return this.#source;
    }
    get ports() {
      return this.#ports;
    }
  }

  const deliver = (port) => {
    if (!port[STARTED] || port[CLOSED] || port[QUEUE].length === 0) return;
    const data = port[QUEUE].shift();
    port.dispatchEvent(new MessageEvent('message', { data }));
    if (port[QUEUE].length > 0) G.setTimeout(deliver, 0, port);
  };

  const handlerProperty = (type) => ({
    configurable: true,
    enumerable: true,
    get() {
      return this[HANDLERS][type]?.fn ?? null;
    },
    set(fn) {
      const old = this[HANDLERS][type];
      if (old) this.removeEventListener(type, old.listener);
      if (typeof fn !== 'function') {
        delete this[HANDLERS][type];
        return;
      }
      const listener = (e) => fn.call(this, e);
      this[HANDLERS][type] = { fn, listener };
      this.addEventListener(type, listener);
      // setting onmessage starts the port, as in the standard
      if (type === 'message') this.start();
    },
  });

  class MessagePort extends EventTarget {
    constructor() {
      if (!constructing) throw new TypeError('Illegal constructor');
      super();
      this[ENTANGLED] = null;
      this[QUEUE] = [];
      this[STARTED] = false;
      this[CLOSED] = false;
      this[HANDLERS] = {};
    }
    postMessage(message, transfer) {
      const options = Array.isArray(transfer) ? { transfer } : transfer;
      const data = G.structuredClone(message, options);
      const other = this[ENTANGLED];
      if (this[CLOSED] || !other || other[CLOSED]) return;
      other[QUEUE].push(data);
      if (other[STARTED] && other[QUEUE].length === 1) G.setTimeout(deliver, 0, other);
    }
    start() {
      if (this[STARTED] || this[CLOSED]) return;
      this[STARTED] = true;
      if (this[QUEUE].length > 0) G.setTimeout(deliver, 0, this);
    }
    close() {
      this[CLOSED] = true;
      this[QUEUE].length = 0;
      const other = this[ENTANGLED];
      this[ENTANGLED] = null;
      if (other) other[ENTANGLED] = null;
    }
    // Node's MessagePort keeps its event loop alive unless unref'd; here a call's life is its own
    ref() {
      return this;
    }
    unref() {
      return this;
    }
  }
  Object.defineProperty(MessagePort.prototype, 'onmessage', handlerProperty('message'));
  Object.defineProperty(MessagePort.prototype, 'onmessageerror', handlerProperty('messageerror'));

  class MessageChannel {
    #port1;
    #port2;
    constructor() {
      constructing = true;
      try {
        this.#port1 = new MessagePort();
        this.#port2 = new MessagePort();
      } finally {
        constructing = false;
      }
      this.#port1[ENTANGLED] = this.#port2;
      this.#port2[ENTANGLED] = this.#port1;
    }
    get port1() {
      return this.#port1;
    }
    get port2() {
      return this.#port2;
    }
  }

  platform.define('MessageEvent', MessageEvent);
  platform.define('MessagePort', MessagePort);
  platform.define('MessageChannel', MessageChannel);
}
