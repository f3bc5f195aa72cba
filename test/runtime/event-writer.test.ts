/**
 * Runtime events leave the response path: a server request is answered while its events wait for
 * the database (here: a table lock held by another session), the events are all written once the
 * database takes them, and stopping the service writes whatever is still queued.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHarness, newUser } from '../_lib/harness.ts';
import { publishServerApp, waitFor } from '../_lib/apps.ts';

const h = await createHarness();
const u = await newUser(h);
const app = await publishServerApp(
  h,
  u.api_key,
  `export default { fetch(req, ctx) { ctx.log.info('hit', { path: new URL(req.url).pathname }); return new Response('ok'); } };`,
);
const hits = async () =>
  Number(
    (
      await h.deps.db
        .selectFrom('app_events')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('app_id', '=', app.appId)
        .where('type', '=', 'runtime.log.info')
        .executeTakeFirstOrThrow()
    ).n,
  );

test('answers do not wait for their events; every event is written once the database takes them', async () => {
  const blocker = await h.deps.pool.connect();
  try {
    await blocker.query('begin');
    await blocker.query('lock table app_events in exclusive mode');
    // the old path awaited its insert before answering: these would hang on the lock
    const answers = await Promise.race([
      Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          Promise.resolve(h.server.request(`http://${app.host}/n${i}`)).then((r) => r.text()),
        ),
      ),
      new Promise<string[]>((_, reject) =>
        setTimeout(() => reject(new Error('answers waited for the event inserts')), 5000).unref(),
      ),
    ]);
    assert.equal(answers, Array(20).fill('ok'));
    assert.is(h.server.runtime.events.queued(), 20, 'the events wait in the queue');
  } finally {
    await blocker.query('rollback');
    blocker.release();
  }
  for (let i = 0; i < 100 && (await hits()) < 20; i++) await new Promise((r) => setTimeout(r, 20));
  assert.is(await hits(), 20);
});

test('stopping the service writes what is still queued', async () => {
  const other = await createHarness();
  const before = await hits();
  const blocker = await h.deps.pool.connect();
  await blocker.query('begin');
  await blocker.query('lock table app_events in exclusive mode');
  const answers = await Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      Promise.resolve(other.server.request(`http://${app.host}/stop${i}`)).then((r) => r.status),
    ),
  );
  assert.ok(answers.every((s) => s === 200));
  assert.is(other.server.runtime.events.queued(), 30);
  // what SIGTERM does: the apps plane closes and writes the queue, here once the lock is gone
  const closing = other.close();
  // the close is writing, and waits on the lock
  await waitFor(async () => {
    const { rows } = await h.deps.pool.query<{ n: string }>(
      `select count(*) as n from pg_stat_activity where wait_event_type = 'Lock' and query ilike 'insert into "app_events"%'`,
    );
    return Number(rows[0]!.n) > 0;
  });
  await blocker.query('rollback');
  blocker.release();
  await closing;
  assert.is((await hits()) - before, 30);
});

test('an event the database can never take is dropped alone; the events around it are written', async () => {
  const { createEventWriter } = await import('../../src/events/writer.ts');
  const errors: unknown[] = [];
  const log = {
    ...h.deps.log,
    error: (...a: unknown[]) => void errors.push(a),
    warn: () => {},
  } as typeof h.deps.log;
  const writer = createEventWriter({ db: h.deps.db, log, flushMs: 1 });
  const base = { account_id: 'acct_x', type: 'runtime.log.info', message: 'queued' };
  const before = await hits();
  // an app that no longer exists breaks the foreign key: no retry can write that one
  writer.add([
    { ...base, app_id: app.appId },
    { ...base, app_id: 'app_does_not_exist' },
    { ...base, app_id: app.appId },
  ]);
  await writer.close();
  assert.is((await hits()) - before, 2);
  assert.is(writer.queued(), 0);
  assert.is(errors.length, 1, 'the dropped event is logged');
});

test('an app logging NUL and lone surrogates does not hold back the log: its lines are stored, U+FFFD in their place', async () => {
  const before = await hits();
  const noisy = await publishServerApp(
    h,
    u.api_key,
    `export default { fetch(req, ctx) { ctx.log.info('a\\u0000b \\uD800', { ['k\\u0000']: ['v\\u0000', '\\uDC00'] }); console.info('c\\u0000'); return new Response('ok'); } };`,
  );
  assert.is(await (await h.server.request(`http://${noisy.host}/x`)).text(), 'ok');
  assert.is(await (await h.server.request(`http://${app.host}/after`)).text(), 'ok');
  const rows = async () =>
    h.deps.db
      .selectFrom('app_events')
      .select(['message', 'metadata'])
      .where('app_id', '=', noisy.appId)
      .where('type', '=', 'runtime.log.info')
      .orderBy('id')
      .execute();
  for (let i = 0; i < 100 && ((await rows()).length < 2 || (await hits()) === before); i++)
    await new Promise((r) => setTimeout(r, 20));
  assert.equal(
    (await rows()).map((r) => [r.message, r.metadata]),
    [
      ['a\uFFFDb \uFFFD', { 'k\uFFFD': ['v\uFFFD', '\uFFFD'] }],
      ['c\uFFFD', {}],
    ],
  );
  assert.is((await hits()) - before, 1, "the other app's event after it is written too");
});

test("an app's flood of log lines is cut at its allowance and reported in one warning; another app's lines all go in", async () => {
  // 200 lines per call (the most a call keeps), 20 calls: 4,000 events against a burst of 2,000 refilled at 200 a second
  const noisy = await publishServerApp(
    h,
    u.api_key,
    `export default { fetch(req, ctx) { for (let i = 0; i < 200; i++) ctx.log.info('line ' + i); return new Response('ok'); } };`,
  );
  const quiet = await publishServerApp(
    h,
    u.api_key,
    `export default { fetch(req, ctx) { ctx.log.info('quiet'); return new Response('ok'); } };`,
  );
  const count = async (appId: string, type: string) =>
    Number(
      (
        await h.deps.db
          .selectFrom('app_events')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('app_id', '=', appId)
          .where('type', '=', type)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const answers = await Promise.all(
    Array.from({ length: 20 }, async (_, i) => [
      await (await h.server.request(`http://${noisy.host}/n${i}`)).text(),
      await (await h.server.request(`http://${quiet.host}/q${i}`)).text(),
    ]),
  );
  assert.ok(answers.flat().every((t) => t === 'ok'));
  const warning = async () =>
    (
      await h.deps.db
        .selectFrom('app_events')
        .select(['message', 'metadata', 'severity'])
        .where('app_id', '=', noisy.appId)
        .where('type', '=', 'runtime.log.warn')
        .execute()
    )[0];
  for (let i = 0; i < 150 && !(await warning()); i++) await new Promise((r) => setTimeout(r, 20));
  await h.server.runtime.events.flush();
  const w = (await warning())!;
  assert.ok(w, 'the drops are reported');
  const kept = await count(noisy.appId, 'runtime.log.info');
  const dropped = (w.metadata as { dropped: number }).dropped;
  assert.ok(kept >= 2000 && kept < 2600, `kept ${kept}`);
  assert.is(kept + dropped, 4000, 'every line is either stored or counted in the warning');
  assert.is(w.severity, 'warn');
  assert.match(
    w.message,
    /^[\d,]+ log lines and runtime events of this app were dropped: it wrote more than 200 a second \(bursts of up to 2,000 are kept\)\.$/,
  );
  assert.is(
    await count(quiet.appId, 'runtime.log.info'),
    20,
    "the other app's lines are all there",
  );
});

test.after(() => h.close());
test.run();
