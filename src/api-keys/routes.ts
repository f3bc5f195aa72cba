import { Hono } from 'hono';
import { errors } from '../errors.ts';
import type { Env } from '../http/env.ts';
import { operation } from '../http/operation.ts';
import { bodyOf, jsonBody } from '../http/validate.ts';
import { newId } from '../lib/ids.ts';
import { generateApiKey } from './keys.ts';
import { type ApiKeyRow, insertKey, listKeys, renameKey, revokeKey } from './queries.ts';
import {
  ApiKeyList,
  ApiKeyMetadata,
  CreateApiKeyRequest,
  CreatedApiKey,
  RenameApiKeyRequest,
  RevokedApiKey,
} from './schemas.ts';

const KEY_ID = /^key_[0-9a-z]{20}$/;
const tags = ['API keys'];

/** The API shape of a key: never the hash, never the raw key. */
export function toApiKeyMetadata(row: ApiKeyRow): ApiKeyMetadata {
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

const list = operation({
  operationId: 'listApiKeys',
  summary: 'List your API keys (metadata only)',
  tags,
  responses: { 200: ApiKeyList },
});
const create = operation({
  operationId: 'createApiKey',
  summary: 'Create an API key; the raw key is returned once',
  tags,
  responses: { 201: CreatedApiKey },
});
const rename = operation({
  operationId: 'renameApiKey',
  summary: 'Rename an API key',
  tags,
  responses: { 200: ApiKeyMetadata },
  errors: ['not_found'],
});
const revoke = operation({
  operationId: 'revokeApiKey',
  summary: 'Revoke an API key (idempotent)',
  description:
    '`revoked` is true when this call revoked the key and false when it was already revoked.',
  tags,
  responses: { 200: RevokedApiKey },
  errors: ['not_found'],
});

/** `/v0/auth/api-keys`: an actor manages their own keys. */
export function apiKeyRoutes(): Hono<Env> {
  const r = new Hono<Env>();

  r.get('/', list, async (c) => {
    const rows = await listKeys(c.var.deps.db, c.var.actor.userId);
    return list.reply(c, 200, { api_keys: rows.map(toApiKeyMetadata) });
  });

  r.post('/', create, jsonBody(CreateApiKeyRequest, { optional: true }), async (c) => {
    const { name } = bodyOf(c, CreateApiKeyRequest);
    const key = generateApiKey();
    const row = await insertKey(c.var.deps.db, {
      id: newId('key'),
      user_id: c.var.actor.userId,
      name: name ?? 'API key',
      key_prefix: key.prefix,
      key_hash: key.hash,
    });
    return create.reply(c, 201, { ...toApiKeyMetadata(row), api_key: key.raw });
  });

  r.patch('/:api_key_id', rename, jsonBody(RenameApiKeyRequest), async (c) => {
    const { name } = bodyOf(c, RenameApiKeyRequest);
    const row = await renameKey(
      c.var.deps.db,
      c.var.actor.userId,
      keyId(c.req.param('api_key_id')),
      name,
    );
    if (!row) throw errors.notFound('API key');
    return rename.reply(c, 200, toApiKeyMetadata(row));
  });

  r.delete('/:api_key_id', revoke, async (c) => {
    const result = await revokeKey(
      c.var.deps.db,
      c.var.actor.userId,
      keyId(c.req.param('api_key_id')),
    );
    if (!result) throw errors.notFound('API key');
    return revoke.reply(c, 200, { ...toApiKeyMetadata(result.row), revoked: result.revoked });
  });

  return r;
}
