// @ts-check
/** The web platform globals apps get, defined on the global object. */
import { runInSnapshot, snapshot } from './async-context.js';
import { G, hide, host } from './head.js';
import { bytesOf, loadChunk, platform, provided, utf8, utf8Decode } from './lazy.js';
import { URL, queryPairs } from './url.js';
import { $bytes, $hostBody, $redirected, $source, $url, $used, atob, btoa } from './private.js';
import { Headers } from './headers.js';
import { Request, fetchError } from './body.js';
import { Response } from './response.js';
import { pullFrom } from './host-streams.js';

// ---- globals --------------------------------------------------------------------------------
var globals = {
  URL: URL,
  Headers: Headers,
  Request: Request,
  Response: Response,
  atob: atob,
  btoa: btoa,
  queueMicrotask: function (fn) {
    if (typeof fn !== 'function')
      throw new TypeError('queueMicrotask: the callback must be a function');
    Promise.resolve().then(function () {
      fn();
    });
  },
  performance: {
    now: function () {
      return host.now();
    },
    timeOrigin: Date.now(),
  },
  navigator: { userAgent: 'platform-runtime' },
  self: G,
  reportError: function (e) {
    loadChunk('console');
    provided.console.error(e);
  },
};

for (var name of Object.keys(globals)) hide(G, name, globals[name]);

platform.internals = {
  Request: Request,
  Response: Response,
  $url: $url,
  $redirected: $redirected,
  $hostBody: $hostBody,
  $source: $source,
  $used: $used,
  $bytes: $bytes,
  utf8: utf8,
  utf8Decode: utf8Decode,
  bytesOf: bytesOf,
  atob: atob,
  fetchError: fetchError,
  pullFrom: pullFrom,
  queryPairs: queryPairs,
  qsStringify: host.qsStringify,
  hide: hide,
  hostConsole: host.console,
  setTimer: host.setTimer,
  clearTimer: host.clearTimer,
  // timers run their callbacks in the async context they were set in
  asyncContext: { snapshot: snapshot, runInSnapshot: runInSnapshot },
  randomBytes: host.randomBytes,
  randomUUID: host.randomUUID,
  subtle: function () {
    loadChunk('subtle');
    return provided.subtle;
  },
  fetch: function (id, json, body) {
    return host.fetch(id, json, body);
  },
  fetchAbort: function (id) {
    host.fetchAbort(id);
  },
};
