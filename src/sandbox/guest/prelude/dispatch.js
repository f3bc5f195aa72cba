// @ts-check
/** Dispatch: what the worker calls for each invocation, and the ctx an app's handlers get. */
import { G, hide, host, wire } from './head.js';
import { loadChunk, platform, provided, utf8 } from './lazy.js';
import {
  $bytes,
  $headers,
  $hostBody,
  $map,
  $source,
  $text,
  $used,
  $user,
  atob,
} from './private.js';
import { MAX_STREAM_BODY, Request, bodyStream, setCountryHeader } from './body.js';
import { Response } from './response.js';
import { pullFrom } from './host-streams.js';

// ---- dispatch: called by the worker for each invocation ------------------------------------
var freezeDeep = function (o) {
  Object.freeze(o);
  for (var k of Object.keys(o)) if (o[k] && typeof o[k] === 'object') freezeDeep(o[k]);
  return o;
};

var logFn = function (level) {
  return function (m, md) {
    host.log(level, wire(String(m)), md === undefined ? undefined : JSON.stringify(md));
  };
};

// Asynchronous platform calls: a failure arrives as an Error with a stable `code`. An answer with
// bytes (a KV value) arrives as `[json, ArrayBuffer]` and resolves to `{ value, bytes }`.
var hostAnswer = function (r) {
  return typeof r === 'string' ? JSON.parse(r) : { value: JSON.parse(r[0]), bytes: r[1] };
};

var hostCall = function (method, args, bytes) {
  return host.call(method, JSON.stringify(args), bytes).then(hostAnswer, function (e) {
    var info;
    try {
      info = JSON.parse(e.message);
    } catch (_x) {
      info = { code: 'internal_error', message: String(e?.message) };
    }
    var err = new Error(info.message);
    Object.assign(err, { name: 'PlatformError', code: info.code });
    throw err;
  });
};

platform.internals.hostCall = hostCall;

// `@netlify/blobs` as the CLI bundles it (src/cli/node-compat/netlify-blobs.js) reaches its store here
hide(G, '__netlifyBlobsHost', function (method, args, bytes) {
  if (!/^blobs\.(get|set|delete|list)$/.test(String(method)))
    return Promise.reject(new TypeError('not a blob store call'));
  return hostCall(method, args, bytes);
});

var binaryBytes = function (binary) {
  var out = new Uint8Array(binary.length);
  for (var i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
};

// The Cache API as Workers offer it (`caches.default`, `caches.open(name)`): responses kept by the
// origin's shared cache for this app, by their own Cache-Control, one namespace per name.
/** `fn` with the request `input` names; a promise rejected with the constructor's error when it names none. */
var withRequest = function (input, fn) {
  try {
    var req = input instanceof Request ? input : new Request(input);
  } catch (e) {
    return Promise.reject(e);
  }
  return fn(req);
};

var headerPairs = function (headers) {
  var out = [];
  headers.forEach(function (v, k) {
    out.push([k, v]);
  });
  return out;
};

var makeCache = function (name) {
  return Object.freeze({
    match: function (input, options) {
      return withRequest(input, function (req) {
        if (req.method !== 'GET' && !options?.ignoreMethod) return Promise.resolve(undefined);
        var args = [name, req.url, headerPairs(req.headers)];
        return hostCall('cache.match', args).then(function (a) {
          if (!a) return undefined;
          var body = a.base64 ? binaryBytes(atob(a.base64)) : null;
          return new Response(body, { status: a.status, headers: a.headers });
        });
      });
    },
    put: function (input, response) {
      return withRequest(input, function (req) {
        var refuse = function (why) {
          return Promise.reject(new TypeError('Cache.put: ' + why));
        };
        if (req.method !== 'GET') return refuse('only GET requests can be cached');
        if (!(response instanceof Response))
          return refuse('the second argument must be a Response');
        if (response.status === 206) return refuse('a partial response (206) cannot be cached');
        var vary = response.headers.get('vary') || '';
        if (/(^|,)\s*\*\s*(,|$)/.test(vary))
          return refuse("a response with 'Vary: *' cannot be cached");
        // the prelude's own Response type is partial: the full class comes with the fetch chunk
        var full = /** @type {any} */ (response);
        if (full.bodyUsed) return refuse('the response body was already used');
        return full.arrayBuffer().then(function (body) {
          var args = [name, req.url, headerPairs(req.headers), response.status];
          args.push(headerPairs(response.headers));
          return hostCall('cache.put', args, body).then(function () {
            return undefined;
          });
        });
      });
    },
    delete: function (input, options) {
      return withRequest(input, function (req) {
        if (req.method !== 'GET' && !options?.ignoreMethod) return Promise.resolve(false);
        return hostCall('cache.delete', [name, req.url]);
      });
    },
  });
};

var defaultCache = null;

hide(
  G,
  'caches',
  Object.freeze({
    get default() {
      return defaultCache || (defaultCache = makeCache(''));
    },
    open: function (cacheName) {
      return Promise.resolve(makeCache('named:' + String(cacheName)));
    },
  }),
);

export var ctx = null;

var SECRET_NAME = /^[A-Z][A-Z0-9_]{0,63}$/;

// Called once per instance: ctx is the same object for every call (host functions know the current call).
var authError = function (status, code, message) {
  return Object.assign(new Error(message), { name: 'AuthError', status: status, code: code });
};

var currentUser = function (request) {
  return request instanceof Request && request[$user] ? request[$user] : null;
};

hide(G, '__setApp', function (appJson, flagsJson) {
  var flags = JSON.parse(flagsJson || '{}');
  setCountryHeader(flags.countryHeader || null);
  var extra = {};
  var publicStores = flags.publicStores || [];
  // An upload's bytes cross to the host as one ArrayBuffer (never as base64 or JSON): a string is
  // its UTF-8, a typed array or ArrayBuffer its bytes (copied only when a view covers part of its
  // buffer), a Blob or File its contents, with its name and type (else application/octet-stream) as
  // the options' defaults.
  var uploadBytes = function (data) {
    if (typeof data === 'string') return utf8(data).buffer;
    if (data instanceof ArrayBuffer) return data;
    if (ArrayBuffer.isView(data))
      return data.byteOffset === 0 && data.byteLength === data.buffer.byteLength
        ? data.buffer
        : data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
    return null;
  };
  var isBlob = function (data) {
    return (
      data !== null &&
      typeof data === 'object' &&
      typeof data.arrayBuffer === 'function' &&
      typeof data.type === 'string' &&
      typeof data.size === 'number'
    );
  };
  extra.files = Object.freeze({
    store: function (name) {
      name = String(name);
      return Object.freeze({
        createUpload: function (data, options) {
          var opts = options || {};
          if (isBlob(data)) {
            var defaults = {
              content_type: data.type || 'application/octet-stream',
              filename: typeof data.name === 'string' && data.name ? data.name : undefined,
            };
            var given = {};
            for (var k in opts) given[k] = opts[k];
            if (given.filename === undefined) given.filename = defaults.filename;
            if (given.content_type === undefined) given.content_type = defaults.content_type;
            return Promise.resolve(data.arrayBuffer()).then(function (ab) {
              return hostCall('files.upload', [name, given], ab);
            });
          }
          var bytes = uploadBytes(data);
          if (!bytes)
            return Promise.reject(
              new TypeError(
                'createUpload: bytes must be a string, an ArrayBuffer, a typed array or a Blob',
              ),
            );
          return hostCall('files.upload', [name, opts], bytes);
        },
        getPublicUrl: function (fileId) {
          if (publicStores.indexOf(name) < 0) {
            throw Object.assign(new Error('Store ' + name + ' is private; use createSignedUrl()'), {
              name: 'PlatformError',
              code: 'store_not_public',
            });
          }
          return (
            ctx.app.origin + '/_platform/files/' + name + '/' + encodeURIComponent(String(fileId))
          );
        },
        createSignedUrl: function (fileId, options) {
          return hostCall('files.signedUrl', [name, String(fileId), options || {}]).then(
            function (r) {
              return r.url;
            },
          );
        },
        delete: function (fileId) {
          return hostCall('files.delete', [name, String(fileId)]);
        },
      });
    },
  });
  if (flags.appUsers) {
    // ctx.auth exists only when the release declares auth.mode app_users.
    extra.auth = Object.freeze({
      currentUser: currentUser,
      requireRole: function (request, role) {
        var u = currentUser(request);
        if (!u) throw authError(401, 'unauthenticated', 'Sign in first.');
        if (u.roles.indexOf(String(role)) < 0)
          throw authError(403, 'forbidden', 'This needs the role ' + String(role) + '.');
        return u;
      },
    });
  }
  ctx = Object.freeze(
    Object.assign(
      {
        app: freezeDeep(JSON.parse(appJson)),
        secrets: Object.freeze({
          get: platform.secret,
          require: function (name) {
            var raw = host.secret(wire(String(name)));
            var v = raw === undefined ? undefined : JSON.parse(raw);
            if (v === undefined) throw new Error('Secret ' + String(name) + ' is not set');
            return v;
          },
        }),
        log: Object.freeze({
          debug: logFn('debug'),
          info: logFn('info'),
          warn: logFn('warn'),
          error: logFn('error'),
        }),
        data: Object.freeze({
          collection: function (name) {
            name = String(name);
            return Object.freeze({
              create: function (fields) {
                return hostCall('data.create', [name, fields === undefined ? {} : fields]);
              },
              update: function (id, fields) {
                return hostCall('data.update', [
                  name,
                  String(id),
                  fields === undefined ? {} : fields,
                ]);
              },
              get: function (id) {
                return hostCall('data.get', [name, String(id)]);
              },
              delete: function (id) {
                return hostCall('data.delete', [name, String(id)]);
              },
              list: function (options) {
                return hostCall('data.list', [name, options === undefined ? {} : options]);
              },
            });
          },
        }),
        // The release's static files, as Workers' ASSETS binding gives them (env.ASSETS works too)
        assets: Object.freeze({
          fetch: function (input, init) {
            var req = input instanceof Request ? input : new Request(input, init);
            var m = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*([^?#]*)/i.exec(String(req.url));
            return hostCall('assets.fetch', [m?.[1] || '/', req.method]).then(function (a) {
              var body =
                a.text !== null ? a.text : a.base64 !== null ? binaryBytes(atob(a.base64)) : null;
              return new Response(body, { status: a.status, headers: a.headers });
            });
          },
        }),
        jobs: Object.freeze({
          enqueue: function (jobName, payload, options) {
            return hostCall('jobs.enqueue', [
              String(jobName),
              payload === undefined ? null : payload,
              options || {},
            ]);
          },
        }),
      },
      extra,
    ),
  );
  // A Workers app reads its configuration as env.NAME (Hono: c.env.NAME): ctx is passed where env
  // is, and an uppercase name that is not a ctx member reads the secret of that name.
  // the release's bindings (env.CACHE: a KV namespace), made on first use by their chunk
  var bindingSpec = flags.bindings || {};
  var bound = null;
  // env lists its bindings as Workers' does (apps walk Object.entries(env)): each one an
  // enumerable getter, made on first touch. As on Workers, app code may add to env (libraries
  // keep helpers there: env.OAUTH_PROVIDER); the platform's members stay frozen objects.
  var env = Object.assign({}, ctx);
  Object.keys(bindingSpec).forEach(function (name) {
    Object.defineProperty(env, name, {
      enumerable: true,
      configurable: true,
      get: function () {
        if (!bound) {
          loadChunk('bindings');
          bound = provided.bindings(bindingSpec);
        }
        return bound[name];
      },
      set: function (v) {
        Object.defineProperty(env, name, {
          value: v,
          writable: true,
          enumerable: true,
          configurable: true,
        });
      },
    });
  });
  ctx = new Proxy(env, {
    get: function (t, k) {
      if (typeof k !== 'string' || k in t || !SECRET_NAME.test(k)) return t[k];
      if (k === 'ASSETS') return t.assets;
      return platform.secret(k);
    },
  });
  // `import { env } from 'cloudflare:workers'` reads it here
  hide(G, '__workersEnv', ctx);
});

// Streamed answers being sent: the host pulls each chunk (`__pull`) as the visitor takes it.
var outStreams = new Map();

var nextOutStream = 1;

hide(G, '__pull', function (id) {
  return pullFrom(outStreams, id);
});

hide(G, '__cancel', function (id) {
  var reader = outStreams.get(id);
  outStreams.delete(id);
  return reader
    ? reader.cancel(new DOMException('The visitor went away', 'AbortError'))
    : undefined;
});

export var toResult = function (res, stream) {
  if (!(res instanceof Response))
    throw new TypeError(
      'fetch() must return a Response (got ' + (res === null ? 'null' : typeof res) + ')',
    );
  if (res[$hostBody]) bodyStream(res, null); // a fetched response passed on streams through
  if (res[$source] && !stream) {
    // where the answer cannot stream (a webhook's), the stream is read to its end first
    var source = res[$source];
    res[$source] = null;
    return provided.readAll(source, MAX_STREAM_BODY, true).then(function (b) {
      res[$bytes] = b;
      return toResult(res);
    });
  }
  // The head as lines: status, the number of headers, then each name and value on a line of its own
  // (header values never hold a line break). Built by concatenation: JSON.stringify of the same
  // object costs QuickJS more. Straight from the header map (the host does not need them
  // sorted); set-cookie stays one entry each.
  var lines = '';
  var n = 0;
  for (var e of res[$headers][$map]) {
    if (e[0] === 'set-cookie')
      for (var i = 0; i < e[1].length; i++, n++) lines += '\n' + e[0] + '\n' + e[1][i];
    else {
      lines += '\n' + e[0] + '\n' + (e[1].length === 1 ? e[1][0] : e[1].join(', '));
      n++;
    }
  }
  // the status as the app's Response reports it (a subclass may say anything): the host refuses what is not a number in range
  var status = res.status;
  var meta = (typeof status === 'number' ? status : NaN) + '\n' + n + lines;
  if (res[$source]) {
    var id = nextOutStream++;
    outStreams.set(id, res[$source].getReader());
    res[$source] = null;
    res[$used] = true;
    return { meta: meta, stream: id };
  }
  // A text answer crosses as one string, the head then the text (one read for the host), unless
  // the text holds a NUL, which the host's read of a C string would cut short: then as bytes.
  var text = res[$bytes] === null ? res[$text] : undefined;
  if (text !== undefined && text.indexOf('\0') < 0) return meta + '\n' + text;
  var bytes = text !== undefined ? utf8(text) : res[$bytes];
  return {
    meta: meta,
    body: bytes
      ? bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)
      : undefined,
  };
};
