import { Hono } from 'hono';
import { pageQuery } from '../http/paging.ts';
import { errors } from '../errors.ts';
import type { Env } from '../http/env.ts';
import { operation } from '../http/operation.ts';
import * as v from 'valibot';
import { bodyOf, jsonBody, query, queryOf } from '../http/validate.ts';
import { newId } from '../lib/ids.ts';
import { generateApiKey, MAX_LIVE_KEYS, tooManyKeys } from './keys.ts';
import {
  type ApiKeyRow,
  insertKey,
  listKeys,
  lockAndCountLiveKeys,
  renameKey,
  revokeKey,
} from './queries.ts';
import {
  ApiKeyList,
  ApiKeyMetadata,
  CreateApiKeyRequest,
  CreatedApiKey,
  RenameApiKeyRequest,
  RevokedApiKey,
} from './schemas.ts';

const KEY_ID = /^key_[0-9a-z]{20}$/;
const CURSOR_PREFIX = 'k1.';

function encodeCursor(row: ApiKeyRow): string {
  return (
    CURSOR_PREFIX + Buffer.from(`${row.created_at.toISOString()}|${row.id}`).toString('base64url')
  );
}
function decodeCursor(cursor: string): { created_at: Date; id: string } | undefined {
  if (!cursor.startsWith(CURSOR_PREFIX)) return undefined;
  const text = Buffer.from(cursor.slice(CURSOR_PREFIX.length), 'base64url').toString();
  const [at, id] = text.split('|');
  const created_at = new Date(at ?? '');
  return id && KEY_ID.test(id) && !Number.isNaN(created_at.getTime())
    ? { created_at, id }
    : undefined;
}

export const ApiKeysQuery = v.strictObject({
  ...pageQuery(decodeCursor),
});
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
  summary: 'List your API keys (metadata only), newest first, a page at a time',
  description:
    'At most `limit` keys (default and most 100). Pass the `cursor` of a page back to read the next (older) page; it is null on the last page.',
  tags,
  responses: { 200: ApiKeyList },
});
const create = operation({
  operationId: 'createApiKey',
  summary: 'Create an API key; the raw key is returned once',
  description: `A user holds at most ${MAX_LIVE_KEYS} live (unrevoked) keys: past that, 409 \`conflict\` with \`details {live_keys, limit}\`.`,
  tags,
  responses: { 201: CreatedApiKey },
  errors: ['conflict'],
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

  r.get('/', list, query(ApiKeysQuery), async (c) => {
    const q = queryOf(c, ApiKeysQuery);
    const limit = q.limit ?? 100;
    const rows = await listKeys(c.var.deps.db, c.var.actor.userId, {
      limit: limit + 1,
      after: q.cursor ? decodeCursor(q.cursor) : undefined,
    });
    const page = rows.slice(0, limit);
    const cursor = rows.length > limit ? encodeCursor(page[page.length - 1]!) : null;
    return list.reply(c, 200, { api_keys: page.map(toApiKeyMetadata), cursor });
  });

  r.post('/', create, jsonBody(CreateApiKeyRequest, { optional: true }), async (c) => {
    const { name } = bodyOf(c, CreateApiKeyRequest);
    const key = generateApiKey();
    const row = await c.var.deps.db.transaction().execute(async (trx) => {
      const live = await lockAndCountLiveKeys(trx, c.var.actor.userId);
      if (live >= MAX_LIVE_KEYS) throw tooManyKeys(live);
      return insertKey(trx, {
        id: newId('key'),
        user_id: c.var.actor.userId,
        name: name ?? 'API key',
        key_prefix: key.prefix,
        key_hash: key.hash,
      });
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
