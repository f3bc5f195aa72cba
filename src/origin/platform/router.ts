/**
 * `/_platform/*` on every app origin: the platform's own routes, reserved in every app. Each
 * feature's route table is at the top of its file here; the origin resolves the app and release
 * first and hands them over as bindings (`env.ts`).
 */
import { Hono } from 'hono';
import { errorBody } from '../../errors.ts';
import { originError, originJson } from '../respond.ts';
import { authRoutes } from './auth.ts';
import { dataRoutes } from './data.ts';
import type { OriginEnv } from './env.ts';
import { fileRoutes } from './files.ts';
import { webhookRoutes } from './webhooks.ts';

export const platformRoutes = new Hono<OriginEnv>({ strict: true })
  .basePath('/_platform')
  .route('/auth', authRoutes)
  .route('/data', dataRoutes)
  .route('/files', fileRoutes)
  .route('/webhooks', webhookRoutes)
  .notFound((c) =>
    originJson(404, errorBody('not_found', 'Unknown reserved path.'), c.env.requestId),
  )
  .onError((err, c) =>
    originError(c.env.deps, err, c.env.requestId, {
      app_id: c.env.app.appId,
      extra: { 'cache-control': 'no-store' },
    }),
  );
