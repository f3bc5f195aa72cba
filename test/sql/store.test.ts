/**
 * SQLite databases kept in Postgres under a lease (src/sql/, docs/decisions/sql.md): what one node
 * commits is there for the next, a holder whose lease was taken over can neither write nor serve,
 * two nodes racing for a database get it once, a commit Postgres refused is not acknowledged and
 * not served, a holder killed while writing loses no acknowledged row, and app SQL cannot reach
 * past its database.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { sql } from 'kysely';
import { onDeno } from '../../src/lib/on-deno.ts';
import { SqlDatabase } from '../../src/sql/database.ts';
import { LeaseHeld, LeaseLost } from '../../src/sql/lease.ts';
import { createHarness } from '../_lib/harness.ts';
import { DENO_V8_FLAGS } from '../../scripts/_lib/deno-command.ts';

const h = await createHarness();
const store = h.deps.db;

async function newDatabase(): Promise<string> {
  const id = `sqldb_${randomBytes(6).toString('hex')}`;
  await SqlDatabase.create(store, { id, appId: null, kind: 'd1', name: id });
  return id;
}
const count = (db: SqlDatabase, table: string) =>
  db.run((d) => Number(d.selectValue(`select count(*) from ${table}`)));

test('what one node commits, the next node opening the database reads', async () => {
  const id = await newDatabase();
  const a = await SqlDatabase.open(store, id, 'node_a');
  await a.run((d) => d.exec('create table notes (id integer primary key, body text)'));
  // enough rows to span many chunks, so the file grows, splits pages and rewrites its root
  await a.run((d) => {
    for (let i = 0; i < 2000; i++)
      d.exec({
        sql: 'insert into notes (body) values (?)',
        bind: [`note ${i} ${'y'.repeat(200)}`],
      });
  });
  await a.run((d) =>
    d.exec("delete from notes where id % 2 = 0; update notes set body = 'changed' where id = 1"),
  );
  await a.close();
  const b = await SqlDatabase.open(store, id, 'node_b');
  assert.is(await count(b, 'notes'), 1000);
  assert.is(await b.run((d) => d.selectValue('select body from notes where id = 1')), 'changed');
  assert.is(await b.run((d) => d.selectValue('pragma integrity_check')), 'ok');
  await b.close();
});

test('a database idle on its node gives its lease back, and another node opens it', async () => {
  const id = await newDatabase();
  let forgotten = false;
  const a = await SqlDatabase.open(store, id, 'node_a', {
    ms: 100,
    onIdle: () => (forgotten = true),
  });
  await a.run((d) => d.exec("create table t (v text); insert into t values ('kept')"));
  const holder = async () =>
    (
      await sql<{
        lease_node: string | null;
      }>`select lease_node from sql_databases where id = ${id}`.execute(store)
    ).rows[0]!.lease_node;
  assert.is(await holder(), 'node_a');
  const started = Date.now();
  while ((await holder()) !== null) {
    if (Date.now() - started > 20_000) assert.unreachable('the idle database kept its lease');
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(forgotten, 'the node forgot it');
  const b = await SqlDatabase.open(store, id, 'node_b');
  assert.equal(await b.run((d) => d.selectValues('select v from t')), ['kept']);
  await b.close();
});

test('two nodes racing for one database: one gets it, the other is told who has it', async () => {
  const id = await newDatabase();
  const both = await Promise.allSettled([
    SqlDatabase.open(store, id, 'node_a'),
    SqlDatabase.open(store, id, 'node_b'),
  ]);
  const won = both.filter((r) => r.status === 'fulfilled');
  const lost = both.filter((r) => r.status === 'rejected');
  assert.is(won.length, 1);
  assert.ok((lost[0] as PromiseRejectedResult).reason instanceof LeaseHeld);
  await (won[0] as PromiseFulfilledResult<SqlDatabase>).value.close();
});

test('a holder whose lease was taken over can no longer write, and its write is not kept', async () => {
  const id = await newDatabase();
  const a = await SqlDatabase.open(store, id, 'node_a');
  await a.run((d) => d.exec("create table t (v text); insert into t values ('first')"));
  // node_a stops renewing (paused, cut off): its lease runs out in Postgres and node_b takes it
  await sql`update sql_databases set lease_expires_at = now() - interval '1 second' where id = ${id}`.execute(
    store,
  );
  const b = await SqlDatabase.open(store, id, 'node_b');
  const late = await a
    .run((d) => d.exec("insert into t values ('late')"))
    .then(
      () => 'acknowledged',
      (e) => (e instanceof LeaseLost ? 'lease lost' : String(e)),
    );
  assert.is(late, 'lease lost');
  assert.equal(await b.run((d) => d.selectValues('select v from t')), ['first']);
  // and it does not take the database back while node_b holds it
  const again = await a
    .run((d) => d.selectValue('select count(*) from t'))
    .then(
      () => 'served',
      (e) => (e instanceof LeaseHeld ? 'held' : String(e)),
    );
  assert.is(again, 'held');
  await a.close();
  await b.close();
});

test('a commit Postgres refuses is not acknowledged, and the next call reads what was stored', async () => {
  const id = await newDatabase();
  const a = await SqlDatabase.open(store, id, 'node_a');
  await a.run((d) => d.exec("create table t (v text); insert into t values ('kept')"));
  // Postgres refuses every new chunk (a constraint no row meets): a failed write, for real
  await sql`alter table sql_chunks add constraint sql_chunks_refuse check (false) not valid`.execute(
    store,
  );
  let outcome: string;
  try {
    outcome = await a
      .run((d) => d.exec(`insert into t values ('${'z'.repeat(5000)}')`))
      .then(
        () => 'acknowledged',
        () => 'refused',
      );
  } finally {
    await sql`alter table sql_chunks drop constraint sql_chunks_refuse`.execute(store);
  }
  assert.is(outcome, 'refused');
  assert.equal(await a.run((d) => d.selectValues('select v from t')), ['kept']);
  await a.close();
});

test('app SQL cannot reach past its database: ATTACH, storage PRAGMAs, transactions, extensions', async () => {
  const id = await newDatabase();
  const a = await SqlDatabase.open(store, id, 'node_a');
  const refused = async (statement: string) =>
    a
      .run((d) => d.exec(statement))
      .then(
        () => 'ran',
        (e) =>
          /not authorized|too many attached|prohibited|denied|no such function: load_extension/i.test(
            String(e),
          )
            ? 'refused'
            : String(e),
      );
  assert.is(await refused(`attach database '/tmp/other.db' as other`), 'refused');
  assert.is(await refused(`attach database '${id}@1' as other`), 'refused');
  assert.is(await refused('pragma journal_mode=delete'), 'refused');
  assert.is(await refused('pragma page_size=1024'), 'refused');
  assert.is(await refused('begin'), 'refused');
  assert.is(await refused("select load_extension('x')"), 'refused');
  assert.is(await refused('pragma user_version=3'), 'ran');
  // D1's 2 MB for a value: a larger one is refused, not built in the heap every database shares
  assert.match(
    await a.run((d) => d.selectValue('select length(randomblob(3000000))')).then(String, String),
    /string or blob too big/,
  );
  assert.is(await a.run((d) => d.selectValue('pragma user_version')), 3);
  await a.close();
});

test('a holder killed while writing loses no acknowledged row; another node answers once its lease ends', async () => {
  const id = await newDatabase();
  const child = spawn(
    process.execPath,
    onDeno
      ? ['run', '--allow-all', ...DENO_V8_FLAGS, 'test/sql/holder-child.ts', id, 'node_dying']
      : ['src/lib/run-typescript.mjs', 'test/sql/holder-child.ts', id, 'node_dying'],
    { env: { ...process.env, PLATFORM_SQL_LEASE_MS: '2000' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const acked = () => [...out.matchAll(/acked (\d+)/g)].map((m) => Number(m[1]));
  const started = Date.now();
  while (acked().length < 30) {
    if (child.exitCode !== null || Date.now() - started > 60_000)
      assert.unreachable(`the holder did not write: ${out} ${err}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  const killedAt = Date.now();
  const last = acked();
  let b: SqlDatabase | undefined;
  while (!b) {
    try {
      b = await SqlDatabase.open(store, id, 'node_b');
    } catch (e) {
      if (!(e instanceof LeaseHeld) || Date.now() - killedAt > 30_000) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const waited = Date.now() - killedAt;
  const rows = await b.run((d) => d.selectValues('select id from acked order by id') as number[]);
  for (const i of last) assert.ok(rows.includes(i), `acknowledged row ${i} is there`);
  assert.ok(waited < 10_000, `answered again ${waited} ms after the kill (lease 2 s)`);
  await b.close();
});

test.after(async () => {
  await h.close();
});
test.run();
