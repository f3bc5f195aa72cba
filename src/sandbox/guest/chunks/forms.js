// Blob, File and FormData, and the two form encodings of a body (application/x-www-form-urlencoded
// and multipart/form-data), both ways. Bodies here are whole: the request limit bounds them.

const BYTES = Symbol('bytes');
const enc = new TextEncoder();

function toBytes(part) {
  if (part instanceof Blob) return part[BYTES];
  if (part instanceof ArrayBuffer) return new Uint8Array(part.slice(0));
  if (ArrayBuffer.isView(part))
    return new Uint8Array(part.buffer.slice(part.byteOffset, part.byteOffset + part.byteLength));
  return enc.encode(String(part));
}
function concat(list) {
  let size = 0;
  for (const b of list) size += b.length;
  const out = new Uint8Array(size);
  let at = 0;
  for (const b of list) {
    out.set(b, at);
    at += b.length;
  }
  return out;
}

/** WebIDL's conversions of the constructors' arguments: a sequence, and an optional dictionary. */
function sequence(parts, what) {
  if (parts === undefined) return [];
  if (
    (typeof parts !== 'object' && typeof parts !== 'function') ||
    parts === null ||
    typeof parts[Symbol.iterator] !== 'function'
  )
    throw new TypeError(`${what}: the parts must be a sequence (an array or an iterable)`);
  return Array.from(parts, toBytes);
}
function dictionary(options, what) {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' && typeof options !== 'function')
    throw new TypeError(`${what}: the options must be an object`);
  const endings = options.endings;
  if (endings !== undefined && endings !== 'transparent' && endings !== 'native')
    throw new TypeError(`${what}: endings must be "transparent" or "native"`);
  return options;
}

class Blob {
  constructor(parts = undefined, options = undefined) {
    const bytes = sequence(parts, 'Blob');
    options = dictionary(options, 'Blob');
    this[BYTES] = concat(bytes);
    const type = options.type === undefined ? '' : String(options.type);
    this._type = /[^\u0020-\u007e]/.test(type) ? '' : type.toLowerCase();
  }
  get size() {
    return this[BYTES].length;
  }
  get type() {
    return this._type;
  }
  slice(start = 0, end = this.size, type = '') {
    const b = new Blob([], { type });
    b[BYTES] = this[BYTES].slice(
      start < 0 ? Math.max(this.size + start, 0) : start,
      end < 0 ? Math.max(this.size + end, 0) : end,
    );
    return b;
  }
  arrayBuffer() {
    return Promise.resolve(this[BYTES].slice().buffer);
  }
  bytes() {
    return Promise.resolve(this[BYTES].slice());
  }
  text() {
    return Promise.resolve(new TextDecoder().decode(this[BYTES]));
  }
  stream() {
    const b = this[BYTES];
    return new ReadableStream({
      type: 'bytes',
      start(c) {
        if (b.length) c.enqueue(b.slice());
        c.close();
      },
    });
  }
  get [Symbol.toStringTag]() {
    return 'Blob';
  }
}

class File extends Blob {
  constructor(parts, name, options = undefined) {
    if (arguments.length < 2) throw new TypeError('File: a name is required');
    options = dictionary(options, 'File');
    if (parts === undefined) throw new TypeError('File: the parts are required');
    super(parts, options);
    this._name = String(name);
    this._lastModified =
      options.lastModified === undefined ? Date.now() : Number(options.lastModified);
  }
  get name() {
    return this._name;
  }
  get lastModified() {
    return this._lastModified;
  }
  get webkitRelativePath() {
    return '';
  }
  get [Symbol.toStringTag]() {
    return 'File';
  }
}

const ENTRIES = Symbol('entries');
function entryValue(value, filename) {
  if (value instanceof Blob) {
    if (value instanceof File && filename === undefined) return value;
    return new File(
      [value],
      filename === undefined ? (value instanceof File ? value.name : 'blob') : String(filename),
      { type: value.type },
    );
  }
  return String(value);
}
class FormData {
  constructor(form) {
    if (form !== undefined) throw new TypeError('FormData: a form element cannot be given here');
    this[ENTRIES] = [];
  }
  append(name, value, filename) {
    this[ENTRIES].push([String(name), entryValue(value, filename)]);
  }
  set(name, value, filename) {
    name = String(name);
    const v = entryValue(value, filename);
    const i = this[ENTRIES].findIndex((e) => e[0] === name);
    if (i < 0) return void this[ENTRIES].push([name, v]);
    this[ENTRIES][i] = [name, v];
    this[ENTRIES] = this[ENTRIES].filter((e, j) => e[0] !== name || j === i);
  }
  get(name) {
    const e = this[ENTRIES].find((x) => x[0] === String(name));
    return e ? e[1] : null;
  }
  getAll(name) {
    return this[ENTRIES].filter((x) => x[0] === String(name)).map((x) => x[1]);
  }
  has(name) {
    return this[ENTRIES].some((x) => x[0] === String(name));
  }
  delete(name) {
    this[ENTRIES] = this[ENTRIES].filter((x) => x[0] !== String(name));
  }
  forEach(cb, thisArg) {
    for (const [k, v] of this[ENTRIES]) cb.call(thisArg, v, k, this);
  }
  entries() {
    return formDataIterator(this, 2);
  }
  keys() {
    return formDataIterator(this, 0);
  }
  values() {
    return formDataIterator(this, 1);
  }
  [Symbol.iterator]() {
    return formDataIterator(this, 2);
  }
  get [Symbol.toStringTag]() {
    return 'FormData';
  }
}

// A WebIDL pair iterator: live over the entry list by index (an entry deleted ahead is not
// visited), its prototype's prototype %IteratorPrototype%, its tag "FormData Iterator"
const TARGET = Symbol('target');
const KIND = Symbol('kind');
const INDEX = Symbol('index');
const FormDataIteratorPrototype = Object.create(
  Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]())),
  {
    next: {
      configurable: true,
      enumerable: true,
      writable: true,
      value: function next() {
        if (!this || !(this[TARGET] instanceof FormData))
          throw new TypeError('next called on an object that is not a FormData iterator');
        const list = this[TARGET][ENTRIES];
        const i = this[INDEX];
        if (i >= list.length) return { value: undefined, done: true };
        this[INDEX] = i + 1;
        const e = list[i];
        return { value: this[KIND] === 2 ? [e[0], e[1]] : e[this[KIND]], done: false };
      },
    },
    [Symbol.toStringTag]: { configurable: true, value: 'FormData Iterator' },
  },
);
function formDataIterator(form, kind) {
  const it = Object.create(FormDataIteratorPrototype);
  it[TARGET] = form;
  it[KIND] = kind;
  it[INDEX] = 0;
  return it;
}

const quote = (s) => s.replace(/\r/g, '%0D').replace(/\n/g, '%0A').replace(/"/g, '%22');
/** multipart/form-data bytes and their content type. */
function encodeMultipart(form) {
  const boundary = '----platform-form-' + crypto.randomUUID().replace(/-/g, '');
  const parts = [];
  for (const [name, value] of form[ENTRIES]) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${quote(name)}"`;
    if (value instanceof File) {
      head += `; filename="${quote(value.name)}"\r\nContent-Type: ${value.type || 'application/octet-stream'}\r\n\r\n`;
      parts.push(enc.encode(head), value[BYTES], enc.encode('\r\n'));
    } else
      parts.push(enc.encode(`${head}\r\n\r\n${value.replace(/\r(?!\n)|(?<!\r)\n/g, '\r\n')}\r\n`));
  }
  parts.push(enc.encode(`--${boundary}--\r\n`));
  return { bytes: concat(parts), type: `multipart/form-data; boundary=${boundary}` };
}

function indexOf(hay, needle, from) {
  outer: for (let i = from; i <= hay.length - needle.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}
function param(header, name) {
  const m = new RegExp(`;\\s*${name}="((?:[^"\\\\]|\\\\.)*)"|;\\s*${name}=([^;\\s]+)`, 'i').exec(
    header,
  );
  return m ? (m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]) : undefined;
}
/** A multipart/form-data body (whole) as FormData. */
function parseMultipart(bytes, contentType) {
  const boundary = param(contentType, 'boundary');
  if (!boundary) throw new TypeError('formData(): the multipart body has no boundary');
  const form = new FormData();
  const dec = new TextDecoder();
  const delimiter = enc.encode(`--${boundary}`);
  let at = indexOf(bytes, delimiter, 0);
  if (at < 0) throw new TypeError('formData(): the multipart body has no parts');
  for (;;) {
    at += delimiter.length;
    if (bytes[at] === 45 && bytes[at + 1] === 45) break; // "--": the end
    if (bytes[at] === 13 && bytes[at + 1] === 10) at += 2;
    const headEnd = indexOf(bytes, enc.encode('\r\n\r\n'), at);
    if (headEnd < 0) throw new TypeError('formData(): a multipart part has no end of headers');
    const headers = {};
    for (const line of dec.decode(bytes.subarray(at, headEnd)).split('\r\n')) {
      const i = line.indexOf(':');
      if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    const next = indexOf(bytes, enc.encode(`\r\n--${boundary}`), headEnd + 4);
    if (next < 0) throw new TypeError('formData(): the multipart body ends inside a part');
    const body = bytes.subarray(headEnd + 4, next);
    const disposition = headers['content-disposition'] || '';
    const name = param(disposition, 'name');
    if (name !== undefined) {
      const filename = param(disposition, 'filename');
      if (filename !== undefined)
        form.append(
          name,
          new File([body], filename, {
            type: headers['content-type'] || 'application/octet-stream',
          }),
        );
      else form.append(name, dec.decode(body));
    }
    at = next + 2;
  }
  return form;
}

export default function install(platform) {
  platform.load('streams'); // Blob.stream()
  platform.define('Blob', Blob);
  platform.define('File', File);
  platform.define('FormData', FormData);
  platform.provide('isBlob', (v) => v instanceof Blob);
  platform.provide('blobBytes', (b) => b[BYTES]);
  platform.provide('isForm', (v) => v instanceof FormData);
  platform.provide('encodeForm', encodeMultipart);
  platform.provide('parseForm', (bytes, contentType) => {
    const type = (contentType || '').toLowerCase();
    if (type.startsWith('multipart/form-data')) return parseMultipart(bytes, contentType);
    if (type.startsWith('application/x-www-form-urlencoded')) {
      const form = new FormData();
      for (const [k, v] of new URLSearchParams(new TextDecoder().decode(bytes))) form.append(k, v);
      return form;
    }
    throw new TypeError(
      'formData(): the body is neither multipart/form-data nor application/x-www-form-urlencoded',
    );
  });
  platform.provide('newBlob', (bytes, type) => new Blob([bytes], { type }));
}
