// @ts-check
/** Response. */
import { hide } from './head.js';
import { isLoaded, loadChunk, provided, utf8 } from './lazy.js';
import { URL } from './url.js';
import {
  $bytes,
  $headers,
  $hostBody,
  $redirected,
  $source,
  $status,
  $statusText,
  $stream,
  $type,
  $immutable,
  $text,
  $url,
  $used,
} from './private.js';
import { Headers } from './headers.js';
import { BodyMixin, bodyStream, dictionary, extract, mixBody, setBody } from './body.js';
/** The fetch standard's null body statuses (101 and 103 are below the range a Response may have). */
var NULL_BODY = [204, 205, 304];
/** HTTP's reason-phrase: tabs, spaces, visible ASCII and obs-text. */
var REASON = /^[\t\x20-\x7e\x80-\xff]*$/;

export class Response {
  constructor(body, init) {
    init = dictionary(init, 'Response');
    var status = init.status === undefined ? 200 : Number(init.status);
    if (!(status >= 200 && status <= 599) || Math.floor(status) !== status)
      throw new RangeError('Response status must be an integer from 200 to 599');
    this[$status] = status;
    // '' unless given, as the fetch standard (and Node, Deno, browsers) have it: the reason phrase is not the app's
    var statusText = init.statusText !== undefined ? String(init.statusText) : '';
    if (!REASON.test(statusText))
      throw new TypeError(
        'Response statusText must be a reason phrase (no line breaks or controls)',
      );
    this[$statusText] = statusText;
    if (body !== undefined && body !== null && NULL_BODY.indexOf(status) >= 0)
      throw new TypeError('A Response with status ' + status + ' cannot have a body');
    this[$headers] = new Headers(init.headers);
    if (typeof body === 'string') {
      // Kept as text: most handlers answer strings, and the host encodes them natively.
      if (!this[$headers].has('content-type'))
        this[$headers].set('content-type', 'text/plain;charset=UTF-8');
      this[$text] = body;
      this[$bytes] = null;
    } else {
      // a text response's unread `.body` (Hono's re-wrap) stays text
      var back =
        body && isLoaded('streams') && provided.isStream(body) ? provided.takeBacking(body) : null;
      if (back && back.text !== undefined) {
        this[$text] = back.text;
        this[$bytes] = null;
      } else setBody(this, back ? back.bytes : extract(body, this[$headers]));
    }
    this[$used] = false;
  }
  static json(data, init) {
    var text = JSON.stringify(data);
    // as the standard says: a value JSON cannot represent (undefined, a function) is an error, not an empty body
    if (text === undefined)
      throw new TypeError('Response.json: the value cannot be serialized as JSON');
    // the init's headers are read once (building them first and passing them on copied them a second time)
    var res = newResponse(null, init);
    if (NULL_BODY.indexOf(res[$status]) >= 0)
      throw new TypeError('A Response with status ' + res[$status] + ' cannot have a body');
    if (!res[$headers].has('content-type')) res[$headers].set('content-type', 'application/json');
    res[$text] = text;
    return res;
  }
  static redirect(url, status) {
    status = status === undefined ? 302 : status;
    if ([301, 302, 303, 307, 308].indexOf(status) < 0)
      throw new RangeError('Invalid redirect status');
    return newResponse(null, { status: status, headers: { location: new URL(url).toString() } });
  }
  /** A network error, as the standard has it: type "error", status 0, immutable headers (a handler returning it fails its call). */
  static error() {
    return networkError();
  }
  get status() {
    return this[$status];
  }
  get statusText() {
    return this[$statusText];
  }
  get ok() {
    return this[$status] >= 200 && this[$status] < 300;
  }
  get headers() {
    return this[$headers];
  }
  get redirected() {
    return !!this[$redirected];
  }
  get type() {
    return this[$type] || 'default';
  }
  get url() {
    return this[$url] || '';
  }
  clone() {
    if (this[$used]) throw new TypeError('Body has already been consumed');
    if (this[$hostBody]) bodyStream(this, null); // a fetched body becomes a stream, which tees
    var body = this[$text] !== undefined ? this[$text] : this[$bytes];
    if (this[$source]) {
      var two = provided.teeBody(this[$source]);
      this[$source] = two[0];
      body = two[1];
    }
    if (this[$type] === 'error') return networkError();
    var copy = newResponse(body, {
      status: this[$status],
      statusText: this[$statusText],
      headers: this[$headers],
    });
    copy[$url] = this[$url];
    copy[$redirected] = this[$redirected];
    return copy;
  }
}

// Outside the class body on purpose: a bundled class that names itself inside its body is renamed
// there (`var X = class _X`), and its `name` with it (guest/build.ts).
function newResponse(body, init) {
  return new Response(body, init);
}

function networkError() {
  var res = newResponse(null, undefined);
  res[$status] = 0;
  res[$type] = 'error';
  res[$headers][$immutable] = true;
  return res;
}

mixBody(Response);
// WebIDL's class string ("[object Response]"), which also makes structuredClone refuse it
Object.defineProperty(Response.prototype, Symbol.toStringTag, {
  value: 'Response',
  configurable: true,
});

// Text bodies are encoded only when app code reads them back.
var takeBytes = BodyMixin._take;

hide(Response.prototype, '_take', function () {
  if (this[$text] !== undefined && this[$bytes] === null && !this[$used])
    this[$bytes] = utf8(this[$text]);
  return takeBytes.call(this);
});

Object.defineProperty(Response.prototype, 'body', {
  get: function () {
    var text = this[$text];
    if (text === undefined || this[$bytes] !== null || this[$source])
      return bodyStream(this, this[$bytes]);
    // encoded only if the stream is read: a Response made of it takes the text
    if (!this[$stream]) {
      loadChunk('streams');
      this[$stream] = provided.streamOf(
        function () {
          return utf8(text);
        },
        { text: text },
      );
    }
    return this[$stream];
  },
  configurable: true,
});
