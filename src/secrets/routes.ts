import { Hono } from 'hono';
import * as v from 'valibot';
import { appAccess } from '../apps/access.ts';
import { latestRelease } from '../releases/records.ts';
import { manifestOf } from '../manifest/stored.ts';
import { recordEvents } from '../events/record.ts';
import type { Env } from '../http/env.ts';
import { operation } from '../http/operation.ts';
import { bodyOf, jsonBody, parseWith } from '../http/validate.ts';
import { component } from '../openapi/components.ts';
import { SecretName } from '../manifest/schema.ts';
import { seal, secretAad } from './crypto.ts';
import { deleteSecret, listSecretRows, upsertSecret } from './queries.ts';
import { SecretDeleted, SecretList, SecretSummary } from './schemas.ts';

export const MAX_SECRET_BYTES = 65_536;
export const SecretBody = component(
  'SetSecretRequest',
  v.strictObject({
    value: v.pipe(
      v.string(),
      v.check(
        (s) => Buffer.byteLength(s) <= MAX_SECRET_BYTES,
        `must be at most ${MAX_SECRET_BYTES} bytes`,
      ),
    ),
  }),
);
const tags = ['Secrets'];
// A name that breaks the secret-name rule is refused before anything is read or written.
const list = operation({
  operationId: 'listSecrets',
  summary: 'List secret names (set ones, and required ones still missing)',
  tags,
  responses: { 200: SecretList },
});
const set = operation({
  operationId: 'setSecret',
  summary: 'Set a secret value (encrypted at rest)',
  tags,
  responses: { 200: SecretSummary },
  errors: ['invalid_request'],
});
const del = operation({
  operationId: 'deleteSecret',
  summary: 'Delete a secret (idempotent)',
  description: '`deleted` tells whether the secret existed; either way it is absent afterwards.',
  tags,
  responses: { 200: SecretDeleted },
  errors: ['invalid_request'],
});

function secretName(raw: string): string {
  return parseWith(SecretName, raw, 'secret name');
}

/** Names required by the newest release: what the app asks for, live or pending. */
async function requiredNames(c: { var: Env['Variables'] }): Promise<string[]> {
  const rel = await latestRelease(c.var.deps.db, c.var.app.id);
  return rel ? (manifestOf(rel.manifest).resources.secrets?.required ?? []) : [];
}

/** `/v0/apps/:app_id/secrets`: values go in, never come out. */
export function secretRoutes(): Hono<Env> {
  const r = new Hono<Env>();

  r.get('/:app_id/secrets', list, appAccess('secrets.read'), async (c) => {
    const rows = await listSecretRows(c.var.deps.db, c.var.app.id);
    const set = new Set(rows.map((row) => row.name));
    const secrets: SecretSummary[] = rows.map((row) => ({
      name: row.name,
      present: true,
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
    }));
    for (const name of await requiredNames(c))
      if (!set.has(name)) secrets.push({ name, present: false });
    secrets.sort((a, b) => String(a.name).localeCompare(String(b.name)));
    return list.reply(c, 200, { app_id: c.var.app.id, secrets });
  });

  r.put(
    '/:app_id/secrets/:name',
    set,
    appAccess('secrets.write'),
    jsonBody(SecretBody),
    async (c) => {
      const name = secretName(c.req.param('name'));
      const { value } = bodyOf(c, SecretBody);
      const app = c.var.app;
      const sealed = seal(c.var.deps.secretsKey, secretAad(app.id, name), value);
      const row = await c.var.deps.db.transaction().execute(async (trx) => {
        const saved = await upsertSecret(trx, { appId: app.id, name, sealed });
        await recordEvents(trx, [
          {
            app_id: app.id,
            account_id: app.account_id,
            type: 'secret.set',
            message: `Secret ${name} was set.`,
            metadata: { name },
            api_key_id: c.var.actor.apiKeyId,
            request_id: c.var.requestId,
          },
        ]);
        return saved;
      });
      c.var.deps.signals.secretsChanged(app.id);
      return set.reply(c, 200, {
        name: row.name,
        present: true,
        created_at: row.created_at.toISOString(),
        updated_at: row.updated_at.toISOString(),
      });
    },
  );

  r.delete('/:app_id/secrets/:name', del, appAccess('secrets.write'), async (c) => {
    const name = secretName(c.req.param('name'));
    const app = c.var.app;
    const deleted = await c.var.deps.db.transaction().execute(async (trx) => {
      const gone = await deleteSecret(trx, { appId: app.id, name });
      if (gone) {
        await recordEvents(trx, [
          {
            app_id: app.id,
            account_id: app.account_id,
            type: 'secret.deleted',
            severity: 'warn',
            message: `Secret ${name} was deleted.`,
            metadata: { name },
            api_key_id: c.var.actor.apiKeyId,
            request_id: c.var.requestId,
          },
        ]);
      }
      return Boolean(gone);
    });
    c.var.deps.signals.secretsChanged(app.id);
    return del.reply(c, 200, { app_id: app.id, name, deleted, present: false });
  });

  return r;
}
