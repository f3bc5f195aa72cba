// @hono/node-server as the CLI bundles it into server code (create-hono's Node template starts
// its app with `serve({ fetch: app.fetch, port })`): there is no port to listen on here, so
// `serve` makes `fetch` the app's request handler, as `Deno.serve(handler)` does, and answers
// with a server that is already listening.

/** @param {{ fetch?: Function, port?: number, hostname?: string } | Function} options */
export function serve(options, listeningListener) {
  const fetch = typeof options === 'function' ? options : options?.fetch;
  if (typeof fetch !== 'function') throw new TypeError('serve() needs a fetch handler');
  const port = (typeof options === 'object' && options.port) || 3000;
  const address = {
    address: (typeof options === 'object' && options.hostname) || '0.0.0.0',
    family: 'IPv4',
    port,
  };
  globalThis.Deno.serve((request) => fetch(request, {}));
  const server = {
    address: () => address,
    listening: true,
    close(callback) {
      if (typeof callback === 'function') queueMicrotask(callback);
      return server;
    },
    on: () => server,
    once: () => server,
    off: () => server,
    ref: () => server,
    unref: () => server,
  };
  if (typeof listeningListener === 'function') queueMicrotask(() => listeningListener(address));
  return server;
}

export const createAdaptorServer = () => {
  throw new Error(
    'createAdaptorServer() makes a Node HTTP server, which there is no socket for here: use serve({ fetch }) or export default app',
  );
};
