/**
 * Data collection speed with 100k rows: equality lists through the real service (the same code
 * ctx.data.collection().list() runs), p50/p99 per query shape, the storage quota's measure of the
 * account, the plan Postgres chose, and how long a release going live takes to build a new index
 * or check and claim a new unique one from the rows (the app's writes wait for it).
 *   npm run bench:data [-- --rows 100000]
 */
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { createRow } from '../src/data/service.ts';
import { listRows } from '../src/data/list.ts';
import { rebuildFromRows, uniqueConflicts } from '../src/data/rebuild.ts';
import { flattenResources } from '../src/manifest/resources.ts';
import { measureStorage } from '../src/storage/measure.ts';
import type { Manifest } from '../src/manifest/schema.ts';
import { startBenchEnv } from './bench-env.ts';
import { percentile } from './_lib/stats.ts';

class Rollback extends Error {}

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '100000' },
    queries: { type: 'string', default: '200' },
  },
});
const ROWS = Number(values.rows);
const Q = Number(values.queries);
const env = await startBenchEnv({ withServer: false });
const db = env.deps.db;
const account = (await db.selectFrom('accounts').select('id').executeTakeFirstOrThrow()).id;
const manifest = {
  app: { name: 'b' },
  runtime: { static_root: 'public' },
  resources: {
    data: {
      collections: {
        items: {
          fields: {
            sku: 'string',
            status: { type: 'enum', values: ['open', 'closed', 'archived'] },
            qty: 'integer',
            note: 'string',
          },
          indexes: [
            { name: 'by_sku', fields: ['sku'], unique: true },
            { name: 'by_status', fields: ['status'] },
            { name: 'by_qty', fields: ['qty'] },
          ],
        },
      },
    },
  },
} as unknown as Manifest;
for (const id of ['benchapp0000000a', 'benchapp0000000b']) {
  await db
    .insertInto('apps')
    .values({ id, account_id: account, name: id, visibility: 'public', tags: '[]' })
    .execute();
}
const t0 = performance.now();
// Setup only: bulk rows shaped exactly as the service writes them, in two apps.
for (const app of ['benchapp0000000a', 'benchapp0000000b']) {
  await sql`insert into app_rows (app_id, collection, id, data, created_at)
    select ${app}, 'items', 'row_' || lpad(g::text, 20, '0'),
      jsonb_build_object('sku', 'sku-' || g, 'status', (array['open','closed','archived'])[1 + g % 3], 'qty', g % 1000, 'note', 'n' || (g % 5000)),
      now() - (g || ' seconds')::interval
    from generate_series(1, ${ROWS}) g`.execute(db);
  // Index entries exactly as the service writes them (key = JSON array of the index's values).
  for (const [index, field] of [
    ['by_sku', 'sku'],
    ['by_status', 'status'],
    ['by_qty', 'qty'],
  ]) {
    await sql`insert into app_row_index_entries (app_id, collection, index_name, key, created_at, row_id)
      select app_id, collection, ${index}, jsonb_build_array(data->${field})::text, created_at, id from app_rows where app_id = ${app}`.execute(
      db,
    );
  }
}
await sql`analyze app_rows`.execute(db);
console.log(
  `inserted ${ROWS} rows into each of 2 apps in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
);

const target = { appId: 'benchapp0000000a', accountId: account, releaseId: 'none', manifest };
const shapes: [string, () => Promise<unknown>][] = [
  ['list, no filter, limit 100', () => listRows(env.deps, target, 'items', { limit: 100 })],
  [
    'where sku = (1 match)',
    () =>
      listRows(env.deps, target, 'items', {
        where: { sku: `sku-${1 + Math.floor(Math.random() * ROWS)}` },
      }),
  ],
  [
    'where qty = (~100 matches)',
    () => listRows(env.deps, target, 'items', { where: { qty: Math.floor(Math.random() * 1000) } }),
  ],
  [
    'where status = (1/3 of rows), limit 50',
    () => listRows(env.deps, target, 'items', { where: { status: 'closed' }, limit: 50 }),
  ],
  [
    'where note = (unindexed, ~20 matches)',
    () =>
      listRows(env.deps, target, 'items', {
        where: { note: `n${Math.floor(Math.random() * 5000)}` },
      }),
  ],
  [
    'create (with a unique-index check)',
    () => createRow(env.deps, target, 'items', { sku: `new-${Math.random()}`, qty: 1 }),
  ],
];
// the storage quota's measure of the whole account (both apps' rows); a node takes it at most every 30 s per writing account
const measure: [string, () => Promise<unknown>] = [
  `storage measure (${2 * ROWS} rows)`,
  () => measureStorage(db, account),
];
console.log(`\n${'query'.padEnd(40)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)}`);
for (const [label, run] of [...shapes, measure]) {
  const n = run === measure[1] ? Math.min(Q, 20) : Q;
  for (let i = 0; i < Math.min(10, n); i++) await run();
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = performance.now();
    await run();
    times.push(performance.now() - s);
  }
  console.log(
    `${label.padEnd(40)} ${percentile(times, 50).toFixed(2).padStart(8)} ${percentile(times, 99).toFixed(2).padStart(8)}`,
  );
}
const plan = await sql<{
  'QUERY PLAN': string;
}>`explain select r.id from app_row_index_entries e join app_rows r on r.app_id = e.app_id and r.collection = e.collection and r.id = e.row_id
  where e.app_id = 'benchapp0000000a' and e.collection = 'items' and e.index_name = 'by_qty' and e.key = '[77]' and r.deleted_at is null order by e.created_at, e.row_id limit 100`.execute(
  db,
);
console.log(
  '\nplan for where qty = 77 (declared index by_qty):\n' +
    plan.rows.map((r) => '  ' + r['QUERY PLAN']).join('\n'),
);

// What a release going live adds to the rows it finds, in a transaction rolled back after each run.
const withIndex = (index: Record<string, unknown>) => {
  const next = structuredClone(manifest) as any;
  next.resources.data.collections.items.indexes.push(index);
  return flattenResources(next as Manifest);
};
const live = flattenResources(manifest);
const activations: [string, ReturnType<typeof flattenResources>][] = [
  ['new index (note)', withIndex({ name: 'by_note', fields: ['note'] })],
  [
    'new unique index (sku, qty): check + claims',
    withIndex({ name: 'by_sku_qty', fields: ['sku', 'qty'], unique: true }),
  ],
];
console.log(`\n${`going live over ${ROWS} rows`.padEnd(44)} ${'runs, s'.padStart(20)}`);
for (const [label, next] of activations) {
  const runs: string[] = [];
  for (let i = 0; i < 3; i++) {
    const s = performance.now();
    await db
      .transaction()
      .execute(async (trx) => {
        const conflicts = await uniqueConflicts(trx, 'benchapp0000000a', live, next);
        if (conflicts.length) throw new Error(conflicts[0]);
        await rebuildFromRows(trx, 'benchapp0000000a', live, next);
        throw new Rollback();
      })
      .catch((err) => {
        if (!(err instanceof Rollback)) throw err;
      });
    runs.push(((performance.now() - s) / 1000).toFixed(2));
  }
  console.log(`${label.padEnd(44)} ${runs.join(' ').padStart(20)}`);
}
await env.close();
process.exit(0);
