import { execFile } from 'node:child_process';
import { waitFor } from '../_lib/apps.ts';
import net from 'node:net';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startEmbeddedPostgres } from '../../src/db/embedded.ts';
import { ADMIN_ARGS } from '../_lib/processes.ts';

const run = promisify(execFile);
const dataDir = path.resolve('.data', 'test-scratch', `embedded-${process.pid}`);
const port = 30000 + (process.pid % 5000);

async function query(url: string, text: string) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text)).rows;
  } finally {
    await c.end();
  }
}

async function reachable(url: string): Promise<boolean> {
  return query(url, 'select 1').then(
    () => true,
    () => false,
  );
}

test('first start initialises; data survives a stop and a second start', async () => {
  const a = await startEmbeddedPostgres({ dataDir, port });
  assert.ok(a.owned);
  await query(a.url(), "create table kept (v text); insert into kept values ('hello')");
  await a.stop();
  assert.not.ok(await reachable(a.url()), 'stopped: nothing listens any more');
  const b = await startEmbeddedPostgres({ dataDir, port: port + 1 });
  assert.equal(await query(b.url(), 'select v from kept'), [{ v: 'hello' }]);
  assert.is(b.url(), a.url(), 'the port chosen at first start is remembered');
  await b.stop();
});

test('two data dirs on one machine: a taken port is avoided at first start, and named when it is taken later', async () => {
  const other = `${dataDir}-second`;
  await rm(other, { recursive: true, force: true });
  const blocker = net.createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
  const taken = (blocker.address() as net.AddressInfo).port;
  try {
    const c = await startEmbeddedPostgres({ dataDir: other, port: taken });
    assert.is.not(new URL(c.url()).port, String(taken), 'another port was chosen');
    assert.ok(await reachable(c.url()));
    const remembered = Number(new URL(c.url()).port);
    await c.stop();
    // the remembered port is now taken by someone else: one clear line, not Postgres's bind errors
    const squatter = net.createServer();
    await new Promise<void>((r) => squatter.listen(remembered, '127.0.0.1', () => r()));
    try {
      await startEmbeddedPostgres({ dataDir: other, port: taken });
      assert.unreachable('started on a taken port');
    } catch (err) {
      assert.match((err as Error).message, `port ${remembered}`);
      assert.match((err as Error).message, 'PLATFORM_DATA_DIR');
    } finally {
      await new Promise<void>((r) => squatter.close(() => r()));
    }
  } finally {
    await new Promise<void>((r) => blocker.close(() => r()));
    await rm(other, { recursive: true, force: true });
  }
});

test('two new data dirs started at the same moment on the same free port both come up, each on its own', async () => {
  const dirs = [`${dataDir}-twin-a`, `${dataDir}-twin-b`];
  for (const d of dirs) await rm(d, { recursive: true, force: true });
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
  const wanted = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  const started = await Promise.allSettled(
    dirs.map((d) => startEmbeddedPostgres({ dataDir: d, port: wanted })),
  );
  try {
    const clusters = started.map((s) => {
      if (s.status === 'rejected') throw s.reason;
      return s.value;
    });
    const ports = clusters.map((c) => new URL(c.url()).port);
    assert.ok(ports.includes(String(wanted)), 'one of them has the port asked for');
    assert.is.not(ports[0], ports[1], 'the other moved to a port of its own');
    for (const c of clusters) assert.ok(await reachable(c.url()));
    // the moved port is the one remembered: a second start of each comes back where it was
    for (const c of clusters) await c.stop();
    for (const [i, d] of dirs.entries()) {
      const again = await startEmbeddedPostgres({ dataDir: d, port: wanted });
      assert.is(new URL(again.url()).port, ports[i]);
      await again.stop();
    }
  } finally {
    for (const s of started) if (s.status === 'fulfilled') await s.value.stop();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  }
});

test('a running cluster is borrowed (takeOver false) or taken over, never started twice', async () => {
  const owner = await startEmbeddedPostgres({ dataDir, port });
  const borrower = await startEmbeddedPostgres({ dataDir, port, takeOver: false });
  assert.not.ok(borrower.owned);
  await borrower.stop();
  assert.ok(await reachable(owner.url()), 'a borrower never stops the cluster');
  const adopter = await startEmbeddedPostgres({ dataDir, port });
  assert.ok(adopter.owned, 'a cluster left running is taken over');
  await adopter.stop();
  assert.not.ok(await reachable(owner.url()));
  // the first owner lives in this process too: let go of its lock, or it takes the lock again
  // (every second) whenever a later start brings the cluster back, and a start from another
  // process (the admin command below) is refused as a second owner
  await owner.stop();
});

test("the owner's lock is taken again when its connection ends under it (its backend terminated)", async () => {
  const owner = await startEmbeddedPostgres({ dataDir, port });
  try {
    const holder = async () =>
      (
        await query(
          owner.url(),
          `select a.pid, a.application_name as app from pg_locks l join pg_stat_activity a on a.pid = l.pid
            where l.locktype = 'advisory' and l.granted and l.classid = ${0x706c6174} and l.objid = 1`,
        )
      )[0] as { pid: number; app: string } | undefined;
    const first = await holder();
    assert.ok(first, 'the owner holds the lock');
    assert.is(first!.app, `platform data dir owner, pid ${process.pid}`);
    await query(owner.url(), `select pg_terminate_backend(${first!.pid})`);
    const again = await waitFor(async () => {
      const h = await holder();
      return h && h.pid !== first!.pid ? h : undefined;
    });
    assert.is(again.app, first!.app, 'this process holds it again, on a new connection');
  } finally {
    await owner.stop();
  }
});

test('the admin command works while the service holds the embedded cluster, and leaves it running', async () => {
  const service = await startEmbeddedPostgres({ dataDir, port });
  const env = {
    ...process.env,
    PLATFORM_DATA_DIR: dataDir,
    PLATFORM_LOG_LEVEL: 'silent',
  } as Record<string, string>;
  delete env.DATABASE_URL;
  const out = await run(
    process.execPath,
    [...ADMIN_ARGS, 'create-user', '--email', `emb-${process.pid}@example.com`],
    { env },
  );
  const result = JSON.parse(out.stdout.trim().split('\n').pop()!);
  assert.match(result.api_key, /^ap_/);
  assert.ok(await reachable(service.url()), 'still running for the service');
  const rows = await query(service.url(), `select email from users where id = '${result.user_id}'`);
  assert.is(rows.length, 1);
  await service.stop();
  // With nothing running, the admin command starts the cluster, works, and stops it again.
  const again = await run(
    process.execPath,
    [...ADMIN_ARGS, 'create-user', '--email', `emb2-${process.pid}@example.com`],
    { env },
  );
  assert.match(again.stdout, /"api_key":"ap_/);
  assert.not.ok(await reachable(service.url()), 'the admin command stopped what it started');
});

test.after(async () => {
  await rm(dataDir, { recursive: true, force: true });
});
test.run();
