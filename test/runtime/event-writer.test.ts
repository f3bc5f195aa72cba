/**
 * Runtime events leave the response path: a server request is answered while its events wait for
 * the database (here: a table lock held by another session), the events are all written once the
 * database takes them, and stopping the service writes whatever is still queued.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHarness, newUser } from '../_lib/harness.ts';
import { publishServerApp } from '../_lib/apps.ts';

const h = await createHarness();
const u = await newUser(h);
const app = await publishServerApp(h, u.api_key, `export default { fetch(req, ctx) { ctx.log.info('hit', { path: new URL(req.url).pathname }); return new Response('ok'); } };`);
const hits = async () => Number((await h.deps.db.selectFrom('app_events').select((eb) => eb.fn.countAll<string>().as('n')).where('app_id', '=', app.appId).where('type', '=', 'runtime.log.info').executeTakeFirstOrThrow()).n);

test('answers do not wait for their events; every event is written once the database takes them', async () => {
  const blocker = await h.deps.pool.connect();
  try {
    await blocker.query('begin');
    await blocker.query('lock table app_events in exclusive mode');
    // the old path awaited its insert before answering: these would hang on the lock
    const answers = await Promise.race([
      Promise.all(Array.from({ length: 20 }, (_, i) => Promise.resolve(h.server.request(`http://${app.host}/n${i}`)).then((r) => r.text()))),
      new Promise<string[]>((_, reject) => setTimeout(() => reject(new Error('answers waited for the event inserts')), 5000)),
    ]);
    assert.equal(answers, Array(20).fill('ok'));
    assert.is(h.server.apps.events.queued(), 20, 'the events wait in the queue');
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
  const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => Promise.resolve(other.server.request(`http://${app.host}/stop${i}`)).then((r) => r.status)));
  assert.ok(answers.every((s) => s === 200));
  assert.is(other.server.apps.events.queued(), 30);
  // what SIGTERM does: the apps plane closes and writes the queue, here once the lock is gone
  const closing = other.close();
  await new Promise((r) => setTimeout(r, 100));
  await blocker.query('rollback');
  blocker.release();
  await closing;
  assert.is((await hits()) - before, 30);
});

test.after(() => h.close());
test.run();
