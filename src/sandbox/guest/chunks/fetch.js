// fetch(): carried out by the host (its checks, limits and redirects), settled here; `data:` URLs are
// answered here. A part of the prelude loaded on first use of `fetch`, so an instance that never fetches
// does not compile it (a cold start compiles the whole prelude: every part left out of it is time saved).

const NULL_BODY = [101, 103, 204, 205, 304];

/** @param {{ define: (name: string, value: unknown) => void, internals: any }} platform */
export default function install(platform) {
  const {
    Request,
    Response,
    $url,
    $redirected,
    $hostBody,
    $source,
    $used,
    $bytes,
    utf8,
    atob,
    fetchError,
    pullFrom,
  } = platform.internals;
  // the host's outbound request and its abort, as the prelude passes them on
  const { fetch: hostFetch, fetchAbort: hostAbort } = platform.internals;
  // request bodies being sent as streams: the host pulls each chunk (`__upPull`)
  const upStreams = new Map();
  platform.define('__upPull', (id) => pullFrom(upStreams, id));
  let fetchIds = 0;

  /** A `data:` URL's response (RFC 2397: optional type, `;base64`, percent-encoded data). */
  const dataResponse = (url) => {
    const comma = url.indexOf(',');
    if (comma < 0) throw new TypeError('fetch: a data: URL needs a comma');
    const head = url.slice(5, comma);
    const body = url.slice(comma + 1);
    const base64 = /;base64$/i.test(head);
    const type = (base64 ? head.slice(0, -7) : head).trim() || 'text/plain;charset=US-ASCII';
    let bytes;
    if (base64) {
      const bin = atob(decodeURIComponent(body));
      bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    } else {
      // percent-decoding to bytes (not to UTF-16), as the URL standard does
      const out = [];
      for (let j = 0; j < body.length; j++) {
        if (body[j] === '%' && /^[0-9a-f]{2}$/i.test(body.slice(j + 1, j + 3))) {
          out.push(parseInt(body.slice(j + 1, j + 3), 16));
          j += 2;
        } else for (const b of utf8(body[j])) out.push(b);
      }
      bytes = new Uint8Array(out);
    }
    const res = new Response(bytes, { status: 200, headers: { 'content-type': type } });
    res[$url] = url;
    return res;
  };

  const fetch = function fetch(input, init) {
    return new Promise((resolve, reject) => {
      const req = new Request(input, init);
      const signal = init?.signal ? init.signal : req.signal;
      if (signal?.aborted) return reject(signal.reason);
      if (req.url.slice(0, 5) === 'data:') {
        if (req.method !== 'GET')
          return reject(new TypeError('fetch: a data: URL answers only GET'));
        return resolve(dataResponse(req.url));
      }
      const id = ++fetchIds;
      const headers = [];
      req.headers.forEach((v, n) => headers.push([n, v]));
      const streamBody = !!req[$source];
      if (streamBody) {
        // a stream body goes out as the host asks for it (`__upPull`)
        upStreams.set(id, req[$source].getReader());
        req[$source] = null;
        req[$used] = true;
      }
      const b = req[$bytes];
      const body = b?.length
        ? b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)
        : undefined;
      const onAbort = () => {
        hostAbort(id);
        reject(signal.reason);
      };
      if (signal && typeof signal.addEventListener === 'function')
        signal.addEventListener('abort', onAbort, { once: true });
      const done = () => {
        if (signal && typeof signal.removeEventListener === 'function')
          signal.removeEventListener('abort', onAbort);
      };
      hostFetch(
        id,
        JSON.stringify({
          url: req.url,
          method: req.method,
          headers,
          redirect: req.redirect,
          streamBody,
        }),
        body,
      ).then(
        (json) => {
          done();
          upStreams.delete(id);
          const meta = JSON.parse(json);
          const res = new Response(null, {
            status: meta.status,
            statusText: meta.statusText,
            headers: meta.headers,
          });
          res[$url] = meta.url;
          res[$redirected] = meta.redirected;
          // the body stays with the host: read whole by text()/json()/..., or chunk by chunk through `body`
          if (meta.body && NULL_BODY.indexOf(meta.status) < 0) res[$hostBody] = id;
          resolve(res);
        },
        (e) => {
          done();
          const up = upStreams.get(id);
          upStreams.delete(id);
          if (up) up.cancel().catch(() => {});
          reject(fetchError(e));
        },
      );
    });
  };
  platform.define('fetch', fetch);
}
