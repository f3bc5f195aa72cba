/** Publish bodies for tests: a small valid site, with overrides. */
import type * as v from 'valibot';
import type { PublishBody } from '../../src/manifest/schema.ts';

export type PublishRequest = v.InferInput<typeof PublishBody>;

export function file(
  path: string,
  content: string | Buffer,
  contentType = 'text/html; charset=utf-8',
) {
  return {
    path,
    content_type: contentType,
    content_base64: Buffer.from(content).toString('base64'),
  };
}

/** A publish body; overrides are merged unchecked, so a test may also build a deliberately bad one. */
export function site(overrides: Record<string, unknown> = {}): PublishRequest {
  return {
    app: { name: 'My site' },
    runtime: { static_root: 'public' },
    files: [
      file('public/index.html', '<h1>Hello</h1>'),
      file('public/app.js', 'console.log(1)', 'text/javascript'),
    ],
    ...overrides,
  } as PublishRequest;
}

export function withResources(
  resources: Record<string, unknown>,
  overrides: Record<string, unknown> = {},
) {
  return site({ resources, ...overrides });
}
