/** Publish bodies for tests: a small valid site, with overrides. */
export function file(path: string, content: string | Buffer, contentType = 'text/html; charset=utf-8') {
  return { path, content_type: contentType, content_base64: Buffer.from(content).toString('base64') };
}

export function site(overrides: Record<string, unknown> = {}): Record<string, any> {
  return {
    app: { name: 'My site' },
    runtime: { static_root: 'public' },
    files: [file('public/index.html', '<h1>Hello</h1>'), file('public/app.js', 'console.log(1)', 'text/javascript')],
    ...overrides,
  };
}

export function withResources(resources: Record<string, unknown>, overrides: Record<string, unknown> = {}) {
  return site({ resources, ...overrides });
}
