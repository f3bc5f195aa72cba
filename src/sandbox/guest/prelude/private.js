// @ts-check
/** base64 (atob, btoa) and the private symbols the classes keep their state under. */
import { host, wire } from './head.js';

// ---- base64 (crypto, timers and console are chunks) ----------------------------------------
var required = function (name, n) {
  if (n < 1)
    throw new TypeError(
      "Failed to execute '" + name + "': 1 argument required, but only 0 present.",
    );
};

export var atob = function (s) {
  required('atob', arguments.length);
  var out = JSON.parse(host.atob(wire(String(s))));
  if (out === null)
    throw new DOMException(
      "Failed to execute 'atob': The string to be decoded is not correctly encoded.",
      'InvalidCharacterError',
    );
  return out;
};

export var btoa = function (s) {
  required('btoa', arguments.length);
  var out = host.btoa(JSON.stringify(String(s)));
  if (out === undefined)
    throw new DOMException(
      "Failed to execute 'btoa': The string to be encoded contains characters outside of the Latin1 range.",
      'InvalidCharacterError',
    );
  return out;
};

// Internal slots of Headers, Request and Response: symbol keys stay out of Object.keys and JSON.stringify,
// and cost a plain property store (defineProperty per slot was most of a Response's construction).
export var $map = Symbol('map'),
  $used = Symbol('used'),
  $bytes = Symbol('bytes'),
  $text = Symbol('text'),
  $url = Symbol('url'),
  $method = Symbol('method'),
  $headerLines = Symbol('headerLines'),
  $headers = Symbol('headers'),
  $signal = Symbol('signal'),
  $user = Symbol('user'),
  $cf = Symbol('cf'),
  $statusText = Symbol('statusText'),
  $status = Symbol('status'),
  $redirect = Symbol('redirect'),
  $redirected = Symbol('redirected'),
  $source = Symbol('source'),
  $stream = Symbol('stream'),
  $hostBody = Symbol('hostBody'),
  $immutable = Symbol('immutable'),
  $type = Symbol('type');
