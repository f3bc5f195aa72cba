// @ts-check
/** Entry shapes: what a module offers, whatever host it was written for. */
import { G, hide } from './head.js';
import { loadChunk, loadedChunks, platform, provided } from './lazy.js';
import { incomingRequest } from './body.js';
import { Response } from './response.js';
import { ctx, toResult } from './dispatch.js';
import { lookup, runWith } from './async-context.js';

// ---- entry shapes: what a module offers, whatever host it was written for ----------------------
// `export default { fetch, job, webhook }` as the contract has it; a default function (Val Town,
// Netlify) for requests and jobs; Workers' `scheduled(controller, env, ctx)` for jobs; the
// service-worker `addEventListener('fetch' | 'scheduled')`; `Deno.serve(handler)`; functions named
// for HTTP methods (`export function GET(request)`).
var scheduledController = function (event) {
  return {
    type: 'scheduled',
    cron: '',
    scheduledTime: Date.parse(event?.scheduled_for) || Date.now(),
    noRetry: function () {},
  };
};

// Handlers named for HTTP methods (Vercel's Web signature, Next.js route handlers):
// `export function GET(request)`; HEAD falls back to GET, a method with none answers 405.
var METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
var byMethod = function (ns) {
  return (
    !!ns &&
    METHODS.some(function (m) {
      return typeof ns[m] === 'function';
    })
  );
};
var methodHandlers = function (ns) {
  var allow = METHODS.filter(function (m) {
    return typeof ns[m] === 'function' || (m === 'HEAD' && typeof ns.GET === 'function');
  }).join(', ');
  return function (request, c, exec) {
    var fn = ns[request.method];
    if (typeof fn !== 'function' && request.method === 'HEAD') fn = ns.GET;
    if (METHODS.indexOf(request.method) < 0 || typeof fn !== 'function')
      return new Response(null, { status: 405, headers: { allow: allow } });
    return fn(request, c, exec);
  };
};

// A default-exported class (Workers' `class extends WorkerEntrypoint { fetch(request) }`): an
// instance per call, made with the call's context and the env, as Workers makes one.
var entrypointClass = function (d) {
  var p = d.prototype;
  return (
    !!p &&
    (typeof p.fetch === 'function' ||
      typeof p.scheduled === 'function' ||
      typeof p.queue === 'function') &&
    /^class[\s{]/.test(Function.prototype.toString.call(d))
  );
};
var fromEntrypoint = function (C) {
  var h = {};
  if (typeof C.prototype.fetch === 'function')
    h.fetch = function (request, env, exec) {
      return new C(exec, env).fetch(request);
    };
  if (typeof C.prototype.scheduled === 'function')
    h.scheduled = function (controller, env, exec) {
      return new C(exec, env).scheduled(controller);
    };
  if (typeof C.prototype.queue === 'function')
    h.queue = function (batch, env, exec) {
      return new C(exec, env).queue(batch);
    };
  return h;
};

hide(G, '__handlersOf', function (ns) {
  var d = ns ? ns.default : undefined;
  var h;
  if (typeof d === 'function' && entrypointClass(d)) h = fromEntrypoint(d);
  else if (typeof d === 'function') h = { fetch: d, job: d };
  else if (d !== null && typeof d === 'object') h = d;
  else h = {};
  var entry = loadedChunks.hosts ? platform.internals.entry : null;
  /** @type {Record<string, Function>} */
  var add = {};
  if (typeof h.fetch !== 'function' && entry && entry.fetch.length) {
    add.fetch = function (request, _ctx, exec) {
      var responded = null;
      var event = {
        type: 'fetch',
        request: request,
        respondWith: function (r) {
          if (responded)
            throw new DOMException('respondWith() was already called', 'InvalidStateError');
          responded = Promise.resolve(r);
        },
        waitUntil: function (p) {
          exec.waitUntil(p);
        },
        passThroughOnException: function () {},
      };
      for (var i = 0; i < entry.fetch.length; i++) entry.fetch[i](event);
      if (!responded) throw new Error('No fetch listener called event.respondWith()');
      return responded;
    };
  } else if (typeof h.fetch !== 'function' && entry && entry.serve) {
    add.fetch = function (request) {
      return entry.serve(request, { remoteAddr: { transport: 'tcp', hostname: '', port: 0 } });
    };
  }
  if (typeof h.fetch !== 'function' && !add.fetch && byMethod(ns)) add.fetch = methodHandlers(ns);
  if (typeof h.job !== 'function' && typeof h.scheduled === 'function') {
    add.job = function (event, c, exec) {
      return h.scheduled(scheduledController(event), c, exec);
    };
  } else if (typeof h.job !== 'function' && entry && entry.scheduled.length) {
    add.job = function (event, _c, exec) {
      var e = scheduledController(event);
      e.waitUntil = function (p) {
        exec.waitUntil(p);
      };
      for (var i = 0; i < entry.scheduled.length; i++) entry.scheduled[i](e);
    };
  }
  var names = Object.keys(add);
  if (!names.length) return h;
  var out = Object.create(h);
  names.forEach(function (n) {
    hide(out, n, add[n]);
  });
  return out;
});

// Workers' third argument: waitUntil's promises settle before the answer is sent (they run within
// the call's limits); there is no origin to pass through to. Methods on a prototype and the list
// made on first use: a call that never waits pays one small object.
function ExecutionContext() {
  this.pending = null;
  this.props = {};
}

ExecutionContext.prototype.waitUntil = function (p) {
  (this.pending || (this.pending = [])).push(
    Promise.resolve(p).then(undefined, function (e) {
      console.error('waitUntil:', e);
    }),
  );
};

ExecutionContext.prototype.passThroughOnException = function () {};

var settled = function (exec, value) {
  return exec.pending
    ? Promise.all(exec.pending).then(function () {
        return value;
      })
    : value;
};

// The call whose handler is running, for `waitUntil` imported from cloudflare:workers: carried by
// the async context where the engine tracks it (async-context.js), else the call whose handler
// began last (exact for its synchronous part).
var runningExec = null;
var EXEC = {};
hide(G, '__workersExec', function () {
  return lookup(EXEC, runningExec);
});

hide(G, '__dispatch', function (handlers, kind, input, body) {
  if (!handlers || typeof handlers[kind] !== 'function') return { missing: true };
  var exec = new ExecutionContext();
  runningExec = exec;
  return runWith(EXEC, exec, dispatch, undefined, [handlers, kind, input, body, exec]);
});

function dispatch(handlers, kind, input, body, exec) {
  if (kind === 'job') {
    // job(event, ctx): the result is not used; finishing (or throwing) is the outcome.
    return Promise.resolve(handlers.job(JSON.parse(input), ctx, exec)).then(function () {
      return settled(exec, { meta: '200\n0' });
    });
  }
  if (kind === 'queue') {
    // Workers' queue(batch, env, ctx): the outcome is what the batch's ack/retry calls decided,
    // sent back as the answer's text (worker/tasks/queue-deliver.ts applies it)
    loadChunk('bindings');
    var run = provided.queueBatch(JSON.parse(input));
    var answer = function (result, error) {
      return Promise.resolve(settled(exec, null)).then(function () {
        return '200\n0\n' + JSON.stringify(run.outcome(result, error));
      });
    };
    return Promise.resolve()
      .then(function () {
        return handlers.queue(run.batch, ctx, exec);
      })
      .then(
        function () {
          return answer('ok');
        },
        function (e) {
          return answer('exception', e);
        },
      );
  }
  if (kind === 'webhook') {
    return Promise.resolve(handlers.webhook(JSON.parse(input), ctx, exec))
      .then(function (res) {
        return settled(exec, res);
      })
      .then(function (res) {
        return res === undefined ? { meta: '200\n0' } : toResult(res);
      });
  }
  // "method\nurl\nuser JSON or nothing\nheader lines" (none of them holds a line break; see the host's requestInput)
  var a = input.indexOf('\n'),
    b = input.indexOf('\n', a + 1),
    c = input.indexOf('\n', b + 1);
  var user = c === b + 1 ? null : JSON.parse(input.slice(b + 1, c));
  var req = incomingRequest(
    input.slice(a + 1, b),
    input.slice(0, a),
    input.slice(c + 1),
    body,
    user,
  );
  var res = handlers[kind](req, ctx, exec);
  // A handler that answers synchronously is answered without a promise round trip.
  if (res instanceof Response && !exec.pending) return toResult(res, true);
  return Promise.resolve(res).then(function (r) {
    return exec.pending
      ? settled(exec, r).then(function (v) {
          return toResult(v, true);
        })
      : toResult(r, true);
  });
}
