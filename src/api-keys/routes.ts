import { Hono } from 'hono';
import * as v from 'valibot';
import { errors } from '../errors.ts';
import type { Env } from '../http/env.ts';
import { bodyOf, closed, describe, jsonBody } from '../http/validate.ts';
import { newId } from '../lib/ids.ts';
import { generateApiKey } from './keys.ts';
import { type ApiKeyRow, insertKey, listKeys, renameKey, revokeKey } from './queries.ts';

const KeyName = v.pipe(v.string(), v.trim(), v.minLength(1, 'must be 1 to 120 characters after trimming'), v.maxLength(120, 'must be 1 to 120 characters after trimming'));
const CreateBody = closed({ name: v.optional(KeyName) });
const RenameBody = closed({ name: KeyName });
const KEY_ID = /^key_[0-9a-z]{20}$/;

export const ApiKeyMetadata = v.object({
  id: v.string(),
  api_key_id: v.string(),
  key_prefix: v.string(),
  name: v.string(),
  created_at: v.string(),
  last_used_at: v.nullable(v.string()),
  revoked_at: v.nullable(v.string()),
});

/** The API shape of a key: never the hash, never the raw key. */
export function toApiKeyMetadata(row: ApiKeyRow): v.InferOutput<typeof ApiKeyMetadata> {
  return {
    id: row.id,
    api_key_id: row.id,
    key_prefix: row.key_prefix,
    name: row.name,
    created_at: row.created_at.toISOString(),
    last_used_at: row.last_used_at?.toISOString() ?? null,
    revoked_at: row.revoked_at?.toISOString() ?? null,
  };
}

function keyId(raw: string): string {
  if (!KEY_ID.test(raw)) throw errors.notFound('API key');
  return raw;
}

/** `/v0/auth/api-keys`: an actor manages their own keys. */
export function apiKeyRoutes(): Hono<Env> {
  const r = new Hono<Env>();

  r.get('/', describe({ summary: 'List your API keys (metadata only)', tags: ['API keys'] }), async (c) => {
    const rows = await listKeys(c.var.deps.db, c.var.actor.userId);
    return c.json({ api_keys: rows.map(toApiKeyMetadata) });
  });

  r.post(
    '/',
    describe({ summary: 'Create an API key; the raw key is returned once', tags: ['API keys'], responses: { 201: { description: 'Created' } } }),
    jsonBody(CreateBody, { optional: true }),
    async (c) => {
      const { name } = bodyOf(c, CreateBody);
      const key = generateApiKey();
      const row = await insertKey(c.var.deps.db, {
        id: newId('key'),
        user_id: c.var.actor.userId,
        name: name ?? 'API key',
        key_prefix: key.prefix,
        key_hash: key.hash,
      });
      return c.json({ ...toApiKeyMetadata(row), api_key: key.raw }, 201);
    },
  );

  r.patch('/:api_key_id', describe({ summary: 'Rename an API key', tags: ['API keys'] }), jsonBody(RenameBody), async (c) => {
    const { name } = bodyOf(c, RenameBody);
    const row = await renameKey(c.var.deps.db, c.var.actor.userId, keyId(c.req.param('api_key_id')), name);
    if (!row) throw errors.notFound('API key');
    return c.json(toApiKeyMetadata(row));
  });

  r.delete('/:api_key_id', describe({ summary: 'Revoke an API key (idempotent)', tags: ['API keys'] }), async (c) => {
    const result = await revokeKey(c.var.deps.db, c.var.actor.userId, keyId(c.req.param('api_key_id')));
    if (!result) throw errors.notFound('API key');
    return c.json({ ...toApiKeyMetadata(result.row), revoked: result.revoked });
  });

  return r;
}
