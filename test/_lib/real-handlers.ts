/**
 * The real-handlers fixtures (test/fixtures/real-handlers/): each one's request and its bundle, the
 * same bytes for the platform, workerd and Node.
 */
import path from 'node:path';
import { jsonBody } from '../fixtures/real-handlers/inputs.ts';
import { bundleForWorkerd } from './real-apps.ts';

export type RealHandler = {
  name: string;
  file: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  contentType?: string;
};

const DIR = path.resolve('test/fixtures/real-handlers');

export const HANDLERS: RealHandler[] = [
  { name: 'hono/jsx 100-row table', file: 'jsx.tsx', method: 'GET', path: '/' },
  { name: 'marked, 20 KB document', file: 'marked.ts', method: 'GET', path: '/' },
  {
    name: 'POST 100 KB JSON',
    file: 'json.ts',
    method: 'POST',
    path: '/',
    body: jsonBody(),
    contentType: 'application/json',
  },
  { name: 'jose HS256 sign+verify', file: 'jose.ts', method: 'GET', path: '/' },
  { name: 'zod, 50-field object', file: 'zod.ts', method: 'GET', path: '/' },
  { name: 'hono, 50 routes', file: 'routes.ts', method: 'GET', path: '/users/42' },
];

/** One ES module with everything the handler imports, as a Workers bundler makes it. */
export function bundleHandler(handler: RealHandler): Promise<string> {
  return bundleForWorkerd(DIR, handler.file, { jsx: 'automatic', jsxImportSource: 'hono/jsx' });
}
