// Worker thread entry. Node 20 does not carry the main thread's TypeScript loader into worker
// threads, so register tsx's here before loading the worker; Deno runs TypeScript natively.
if (!('Deno' in globalThis) && !process.env.PLATFORM_WORKER_NO_TSX) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import('./worker.ts');
