import * as assert from 'uvu/assert';
import { type Harness, newMember, newUser } from './harness.ts';

type Route = { method: string; path: string; body?: unknown; account?: string };

/**
 * The auth checks every authenticated route must pass: no key, malformed key, unknown key and
 * revoked key are 401; when `owner` is given, another account's key is 404 and, when `writeRole`
 * names the lowest role allowed, a viewer (or any role below it) is 403.
 */
export async function checkAuthMatrix(
  h: Harness,
  route: Route,
  options: { ownerAccountId?: string; deniedRoles?: ('viewer' | 'developer' | 'admin')[] } = {},
): Promise<void> {
  const label = `${route.method} ${route.path}`;
  const call = (key: string | null, extra: Record<string, string> = {}) =>
    h.call(route.method, route.path, {
      key,
      body: route.body,
      headers: extra,
      account: route.account,
    });

  const none = await call(null);
  assert.is(none.status, 401, `${label} without a key`);
  assert.is(none.body?.error?.code, 'unauthorized', `${label} without a key: code`);

  const malformed = await h.call(route.method, route.path, {
    headers: { authorization: 'Bearer not-a-key' },
    body: route.body,
  });
  assert.is(malformed.status, 401, `${label} with a malformed key`);
  const basic = await h.call(route.method, route.path, {
    headers: { authorization: 'Basic dXNlcjpwYXNz' },
    body: route.body,
  });
  assert.is(basic.status, 401, `${label} with Basic auth`);

  const unknown = await call(`ap_${'A'.repeat(43)}`);
  assert.is(unknown.status, 401, `${label} with an unknown key`);

  const revokedUser = await newUser(h, 'revoked');
  const keys = await h.call('GET', '/v0/auth/api-keys', { key: revokedUser.api_key });
  const del = await h.call('DELETE', `/v0/auth/api-keys/${keys.body.api_keys[0].id}`, {
    key: revokedUser.api_key,
  });
  assert.is(del.status, 200);
  const revoked = await call(revokedUser.api_key);
  assert.is(revoked.status, 401, `${label} with a revoked key`);

  if (options.ownerAccountId) {
    const stranger = await newUser(h, 'stranger');
    const other = await h.call(route.method, route.path, {
      key: stranger.api_key,
      body: route.body,
    });
    assert.is(other.status, 404, `${label} with another account's key`);
    assert.is(other.body?.error?.code, 'not_found');
    const spoof = await h.call(route.method, route.path, {
      key: stranger.api_key,
      body: route.body,
      account: options.ownerAccountId,
    });
    assert.is(
      spoof.status,
      404,
      `${label} with another account's key and the owner's account header`,
    );
    for (const role of options.deniedRoles ?? []) {
      const member = await newMember(h, options.ownerAccountId, role);
      const denied = await h.call(route.method, route.path, {
        key: member.api_key,
        body: route.body,
        account: route.account,
      });
      assert.is(denied.status, 403, `${label} as ${role}`);
      assert.is(denied.body?.error?.code, 'forbidden');
    }
  }
}
