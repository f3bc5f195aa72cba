// @ts-check
/**
 * Guest prelude: evaluated as global code in every QuickJS context before the app's modules.
 * It builds the web platform subset apps get (Headers, Request, Response, URL, atob, btoa;
 * URLSearchParams, crypto, console, timers, fetch, TextEncoder and the rest as lazily loaded
 * chunks) on top of `__host`, a small set of synchronous functions the worker provides (Node's
 * own URL, UTF-8, base64 and crypto), then removes `__host` from the global scope. Nothing here
 * can reach the network or file system. guest/build.ts bundles these parts, in this order, into
 * one strict script.
 */
import './head.js';
import './async-context.js';
import './lazy.js';
import './es-builtins.js';
import './url.js';
import './private.js';
import './headers.js';
import './body.js';
import './response.js';
import './host-streams.js';
import './globals.js';
import './dispatch.js';
import './entry-shapes.js';

delete globalThis.__host;
