/**
 * A unique index new to the rows holds for every row: declared again after a release without it
 * (rows written in between claimed nothing for it), added to a collection that has rows, made
 * unique, or given other fields. The rows are claimed when it goes live, and a release whose rows
 * do not fit it does not go live (`requires_migration`, by publish and by rollback).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const owner = await newUser(h);
const key = owner.api_key;

const manifest = (indexes: unknown[]) =>
  site({
    resources: {
      data: { collections: { people: { fields: { email: 'string', name: 'string' }, indexes } } },
    },
  });
const UNIQUE = [{ name: 'by_email', fields: ['email'], unique: true }];

const r1 = await h.call('PUT', '/v0/apps', { key, body: manifest(UNIQUE) });
assert.is(r1.body.activation.status, 'live', r1.text);
const appId = r1.body.app_id as string;
const rows = `/v0/apps/${appId}/data/people`;

async function add(email: string) {
  return h.call('POST', rows, { key, body: { email, name: email.split('@')[0] } });
}
async function live() {
  return (await h.call('GET', `/v0/apps/${appId}`, { key })).body.live_release_id as string;
}

const a = await add('a@example.com');
assert.is(a.status, 201, a.text);
assert.is((await add('b@example.com')).status, 201);

// a release without the index: compatible, and its writes claim nothing for it
const r2 = await h.call('PUT', `/v0/apps/${appId}`, { key, body: manifest([]) });
assert.is(r2.body.activation.status, 'live', r2.text);
assert.is((await add('c@example.com')).status, 201);
const renamed = await h.call('PATCH', `${rows}/${a.body.id}`, { key, body: { name: 'Ada' } });
assert.is(renamed.status, 200, renamed.text);
const twin = await add('b@example.com');
assert.is(twin.status, 201, 'allowed while no release declares the index');

test('declaring it again while two rows share a value is requires_migration, naming both', async () => {
  const r3 = await h.call('PUT', `/v0/apps/${appId}`, { key, body: manifest(UNIQUE) });
  assert.is(r3.status, 200, r3.text);
  assert.is(r3.body.activation.status, 'requires_migration');
  const reasons = (r3.body.activation.reasons as string[]).join(' ');
  assert.match(reasons, '"by_email"');
  assert.match(reasons, twin.body.id as string);
  assert.is(await live(), r2.body.release_id, 'the live release is unchanged');
  // rollback to the first release meets the same rows
  const back = await h.call('POST', `/v0/apps/${appId}/rollback`, {
    key,
    body: { release_id: r1.body.release_id },
  });
  assert.is(back.status, 409, back.text);
  assert.is(back.body.error.code, 'requires_migration');
  assert.match(back.body.error.details.reasons.join(' '), '"by_email"');
  assert.is(await live(), r2.body.release_id);
});

test('once the rows fit, it goes live and holds for rows written without it', async () => {
  const removed = await h.call('DELETE', `${rows}/${twin.body.id}`, { key });
  assert.is(removed.status, 200, removed.text);
  const back = await h.call('POST', `/v0/apps/${appId}/rollback`, {
    key,
    body: { release_id: r1.body.release_id },
  });
  assert.is(back.status, 200, back.text);
  assert.is(await live(), r1.body.release_id);
  // c@ was written under the release without the index; a@ was rewritten there (its claim dropped)
  for (const email of ['a@example.com', 'b@example.com', 'c@example.com']) {
    const again = await add(email);
    assert.is(again.status, 409, `${email}: ${again.text}`);
    assert.is(again.body.error.code, 'unique_violation');
  }
  assert.is((await add('d@example.com')).status, 201, 'a new value is still free');
  // and a row's own value is its own: rewriting c@ keeps it
  const list = await h.call('GET', `${rows}?limit=100`, { key });
  const c = (list.body.rows as { id: string; email: string }[]).find(
    (r) => r.email === 'c@example.com',
  )!;
  const kept = await h.call('PATCH', `${rows}/${c.id}`, { key, body: { name: 'Cy' } });
  assert.is(kept.status, 200, kept.text);
});

test('publishing again over a release that declares it stays live and keeps every claim', async () => {
  const same = await h.call('PUT', `/v0/apps/${appId}`, { key, body: manifest(UNIQUE) });
  assert.is(same.body.activation.status, 'live', same.text);
  assert.is((await add('a@example.com')).status, 409);
});

test('a unique index added, made unique, or given other fields goes live when the rows fit it', async () => {
  const plain = [{ name: 'by_name', fields: ['name'] }];
  const uniqueBy = (fields: string[]) => [...UNIQUE, { name: 'by_name', fields, unique: true }];
  // rows a@, b@, c@, d@ are named Ada, b, Cy, d
  const relaxed = await h.call('PUT', `/v0/apps/${appId}`, {
    key,
    body: manifest([...UNIQUE, ...plain]),
  });
  assert.is(relaxed.body.activation.status, 'live', relaxed.text);
  const twinName = await h.call('POST', rows, { key, body: { email: 'e@example.com', name: 'b' } });
  assert.is(twinName.status, 201, twinName.text);

  const refused = await h.call('PUT', `/v0/apps/${appId}`, {
    key,
    body: manifest(uniqueBy(['name'])),
  });
  assert.is(refused.body.activation.status, 'requires_migration', refused.text);
  assert.match(refused.body.activation.reasons.join(' '), '"by_name"');
  assert.match(refused.body.activation.reasons.join(' '), twinName.body.id as string);

  // the same index on (name, email) fits: it goes live and holds
  const pair = await h.call('PUT', `/v0/apps/${appId}`, {
    key,
    body: manifest(uniqueBy(['name', 'email'])),
  });
  assert.is(pair.body.activation.status, 'live', pair.text);
  const twinPair = await h.call('POST', rows, { key, body: { email: 'x@example.com', name: 'b' } });
  assert.is(twinPair.status, 201, twinPair.text);
  const samePair = await h.call('POST', rows, { key, body: { email: 'e@example.com', name: 'b' } });
  assert.is(samePair.status, 409, samePair.text);

  // once the names are unique again, by_name on (name) goes live and holds for the rows stored
  for (const row of [twinName, twinPair])
    assert.is((await h.call('DELETE', `${rows}/${row.body.id}`, { key })).status, 200);
  const fits = await h.call('PUT', `/v0/apps/${appId}`, {
    key,
    body: manifest(uniqueBy(['name'])),
  });
  assert.is(fits.body.activation.status, 'live', fits.text);
  const twin = await h.call('POST', rows, { key, body: { email: 'y@example.com', name: 'Cy' } });
  assert.is(twin.status, 409, twin.text);
  assert.match(twin.body.error.message, '"by_name"');
});

test.after(() => h.close());
test.run();
