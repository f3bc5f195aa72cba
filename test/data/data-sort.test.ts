/**
 * The data browser's column sort: `sort=<field>` / `sort=-<field>` on a field an index starts with,
 * in the field's typed order (numbers as numbers, not text), rows without a value last, paged by a
 * cursor that never skips or repeats a row; and an index a later release adds covers the rows
 * written before it (for sorting and for `where`, in the API and in `ctx.data`).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { file, site } from '../_lib/bundles.ts';
import { createHarness, newUser } from '../_lib/harness.ts';

const h = await createHarness();
const owner = await newUser(h);
const key = owner.api_key;

const manifest = (indexes: unknown[]) =>
  site({
    runtime: { static_root: 'public', fallback: 'server', server_entry: 'server.js' },
    resources: {
      data: {
        collections: {
          items: {
            fields: { name: 'string', price: 'number', size: 'number', when: 'datetime' },
            indexes,
          },
        },
      },
    },
    files: [
      file('public/index.html', 'static'),
      file(
        'server.js',
        `export default { async fetch(req, ctx) {
          const size = Number(new URL(req.url).searchParams.get('size'));
          return Response.json(await ctx.data.collection('items').list({ where: { size } }));
        } };`,
        'text/javascript',
      ),
    ],
  });

const first = await h.call('PUT', '/v0/apps', {
  key,
  body: manifest([{ name: 'by_price', fields: ['price'] }]),
});
const appId = first.body.app_id as string;
const path = `/v0/apps/${appId}/data/items`;
// prices that sort differently as text ("10" < "9") and as numbers, negatives, decimals, a tie, missing ones
const prices = [9, 10, 100, -5, 2.5, 10, null, 0, 1e21, null, 33];
for (const [i, price] of prices.entries()) {
  const r = await h.call('POST', path, {
    key,
    body: { name: `item ${i}`, size: i % 3, ...(price === null ? {} : { price }) },
  });
  assert.is(r.status, 201, r.text);
}

/** Every row of a sorted list, a page of `limit` at a time. */
async function all(query: string, limit: number) {
  const names: string[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const r = await h.call(
      'GET',
      `${path}?${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`,
      { key },
    );
    assert.is(r.status, 200, r.text);
    names.push(...r.body.rows.map((x: { name: string; price?: number }) => `${x.price ?? '-'}`));
    cursor = r.body.cursor;
    if (!cursor) return names;
  }
  throw new Error('no end');
}

test('ascending and descending by a number field, nulls last, pages exact', async () => {
  const up = ['-5', '0', '2.5', '9', '10', '10', '33', '100', '1e+21', '-', '-'];
  const down = ['1e+21', '100', '33', '10', '10', '9', '2.5', '0', '-5', '-', '-'];
  for (const limit of [1, 2, 3, 100]) {
    assert.equal(await all('sort=price', limit), up, `ascending, ${limit} a page`);
    assert.equal(await all('sort=-price', limit), down, `descending, ${limit} a page`);
  }
  // a filter applies to both parts
  const filtered = await h.call(
    'GET',
    `${path}?sort=price&where=${encodeURIComponent('{"size":0}')}`,
    {
      key,
    },
  );
  assert.equal(
    filtered.body.rows.map((x: { price?: number }) => x.price ?? null),
    [-5, 9, null, null],
  );
});

test('a field no index starts with, a cursor from another order', async () => {
  const r = await h.call('GET', `${path}?sort=name`, { key });
  assert.is(r.status, 400);
  assert.is(r.body.error.code, 'invalid_query');
  assert.match(r.body.error.message, /price/);
  const unknown = await h.call('GET', `${path}?sort=nope`, { key });
  assert.is(unknown.status, 400);
  const byTime = await h.call('GET', `${path}?limit=1`, { key });
  const mixed = await h.call('GET', `${path}?sort=price&cursor=${byTime.body.cursor}`, { key });
  assert.is(mixed.status, 400);
  const bad = await h.call('GET', `${path}?sort=price;drop`, { key });
  assert.is(bad.status, 400);
});

test('an index a new release adds covers the rows written before it', async () => {
  const next = await h.call('PUT', `/v0/apps/${appId}`, {
    key,
    body: manifest([
      { name: 'by_price', fields: ['price'] },
      { name: 'by_size', fields: ['size'] },
    ]),
  });
  assert.is(next.body.activation.status, 'live', next.text);
  const sized = await all('sort=size', 4);
  assert.is(sized.length, prices.length, 'every row is in the new index');
  // `where` on the newly indexed field, through the API and through ctx.data
  const api = await h.call('GET', `${path}?where=${encodeURIComponent('{"size":1}')}&limit=100`, {
    key,
  });
  assert.is(api.body.rows.length, prices.filter((_, i) => i % 3 === 1).length);
  const code = await h.call('GET', '/list?size=2', { host: `${appId}.apps.localhost` });
  assert.is(code.body.length, prices.filter((_, i) => i % 3 === 2).length, code.text);
});

test.after(() => h.close());
test.run();
