import { Hono } from 'hono';
import * as v from 'valibot';
import { appAccess } from '../apps/access.ts';
import { findRelease } from '../apps/queries.ts';
import { manifestOf } from '../apps/service.ts';
import { recordEvents } from '../events/record.ts';
import type { Env } from '../http/env.ts';
import { bodyOf, closed, describe, jsonBody, parseWith } from '../http/validate.ts';
import { SecretName } from '../manifest/schema.ts';
import { seal, secretAad } from './crypto.ts';

export const MAX_SECRET_BYTES = 65_536;
const SecretBody = closed({
  value: v.pipe(v.string(), v.check((s) => Buffer.byteLength(s) <= MAX_SECRET_BYTES, `must be at most ${MAX_SECRET_BYTES} bytes`)),
});
const tag = ['Secrets'];

function secretName(raw: string): string {
  return parseWith(SecretName, raw, 'secret name');
}

/** Names required by the newest release: what the app asks for, live or pending. */
async function requiredNames(c: { var: Env['Variables'] }): Promise<string[]> {
  const db = c.var.deps.db;
  const latest = await db.selectFrom('releases').select(['id']).where('app_id', '=', c.var.app.id).orderBy('seq', 'desc').limit(1).executeTakeFirst();
  const rel = latest ? await findRelease(db, c.var.app.id, latest.id) : undefined;
  return rel ? (manifestOf(rel.manifest).resources.secrets?.required ?? []) : [];
}

/** `/v0/apps/:app_id/secrets`: values go in, never come out. */
export function secretRoutes(): Hono<Env> {
  const r = new Hono<Env>();

  r.get('/:app_id/secrets', describe({ summary: 'List secret names (set ones, and required ones still missing)', tags: tag }), appAccess('secrets.read'), async (c) => {
    const rows = await c.var.deps.db.selectFrom('app_secrets').select(['name', 'created_at', 'updated_at']).where('app_id', '=', c.var.app.id).orderBy('name').execute();
    const set = new Set(rows.map((row) => row.name));
    const secrets: Record<string, unknown>[] = rows.map((row) => ({ name: row.name, present: true, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString() }));
    for (const name of await requiredNames(c)) if (!set.has(name)) secrets.push({ name, present: false });
    secrets.sort((a, b) => String(a.name).localeCompare(String(b.name)));
    return c.json({ app_id: c.var.app.id, secrets });
  });

  r.put('/:app_id/secrets/:name', describe({ summary: 'Set a secret value (encrypted at rest)', tags: tag }), appAccess('secrets.write'), jsonBody(SecretBody), async (c) => {
    const name = secretName(c.req.param('name'));
    const { value } = bodyOf(c, SecretBody);
    const app = c.var.app;
    const sealed = seal(c.var.deps.secretsKey, secretAad(app.id, name), value);
    const row = await c.var.deps.db.transaction().execute(async (trx) => {
      const saved = await trx
        .insertInto('app_secrets')
        .values({ app_id: app.id, name, sealed })
        .onConflict((oc) => oc.columns(['app_id', 'name']).doUpdateSet({ sealed, updated_at: new Date() }))
        .returning(['name', 'created_at', 'updated_at'])
        .executeTakeFirstOrThrow();
      await recordEvents(trx, [
        { app_id: app.id, account_id: app.account_id, type: 'secret.set', message: `Secret ${name} was set.`, metadata: { name }, api_key_id: c.var.actor.apiKeyId, request_id: c.var.requestId },
      ]);
      return saved;
    });
    c.var.deps.signals.secretsChanged(app.id);
    return c.json({ name: row.name, present: true, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString() });
  });

  r.delete('/:app_id/secrets/:name', describe({ summary: 'Delete a secret (idempotent)', tags: tag }), appAccess('secrets.write'), async (c) => {
    const name = secretName(c.req.param('name'));
    const app = c.var.app;
    const deleted = await c.var.deps.db.transaction().execute(async (trx) => {
      const gone = await trx.deleteFrom('app_secrets').where('app_id', '=', app.id).where('name', '=', name).returning('name').executeTakeFirst();
      if (gone) {
        await recordEvents(trx, [
          { app_id: app.id, account_id: app.account_id, type: 'secret.deleted', severity: 'warn', message: `Secret ${name} was deleted.`, metadata: { name }, api_key_id: c.var.actor.apiKeyId, request_id: c.var.requestId },
        ]);
      }
      return Boolean(gone);
    });
    c.var.deps.signals.secretsChanged(app.id);
    return c.json({ app_id: app.id, name, deleted, present: false });
  });

  return r;
}
