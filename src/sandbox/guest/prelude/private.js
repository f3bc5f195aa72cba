// @ts-check
/** base64 (atob, btoa) and the private symbols the classes keep their state under. */
import { host, wire } from './head.js';

// ---- base64 (crypto, timers and console are chunks) ----------------------------------------
export var atob = function (s) {
  return JSON.parse(host.atob(wire(String(s))));
};

export var btoa = function (s) {
  return host.btoa(JSON.stringify(String(s)));
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
  $hostBody = Symbol('hostBody');
