/**
 * The operator's command: `npm run admin -- <command>`. Works whether or not the service is
 * running (it reaches the same database, embedded or not) and prints one JSON object last.
 *
 *   create-user --email E [--username U]
 *   add-member  --account A --email E --role owner|admin|developer|viewer
 *   set-plan    --account A --plan P [--force]
 *   flag        --account A | --app X  --set F --reason R | --clear F
 *   billing-state --account A --state S [--grace-days N]
 *   verify-domain --hostname H
 *   unlock-stale-jobs [--older-than-seconds N]
 *   migrate-blobs --to s3|postgres
 *   grant-operator --email E | revoke-operator --email E | list-operators
 *   backup [--to DIR|s3] | restore FILE|s3:NAME
 */
import { parseArgs } from 'node:util';
import { rm } from 'node:fs/promises';
import { boot } from '../src/boot.ts';
import { verifySecretsKey } from '../src/secrets/key-check.ts';
import { localBackupFile } from '../src/backups/run.ts';
import { recordedBackup } from '../src/backups/runs.ts';
import { openBackup, placeSecretsKey, restoreInto } from '../src/backups/restore.ts';
import { type Config, ConfigError, loadConfig } from '../src/config.ts';
import type { Logger } from '../src/logger.ts';
import { ApiError } from '../src/errors.ts';
import { createLogger } from '../src/logger.ts';
import { makeWorkerUtils } from 'graphile-worker';
import pg from 'pg';
import { addMember, createUser } from '../src/users/service.ts';
import {
  adminCommandActor,
  operatorGrant,
  operatorSetBillingState,
  operatorSetFlag,
  operatorSetPlan,
} from '../src/operators/actions.ts';
import { listOperators } from '../src/operators/queries.ts';
import { operatorVerify } from '../src/domains/verify.ts';
import { migrateBlobs } from '../src/blobs/migrate.ts';

/** Workers holding job locks older than `seconds`: force-unlock them (graphile-worker's own API). */
async function unlockStaleJobs(connectionString: string, seconds: number) {
  if (!Number.isFinite(seconds) || seconds < 0)
    fail('--older-than-seconds must be a number of seconds');
  const client = new pg.Client({ connectionString });
  await client.connect();
  const { rows } = await client.query<{ locked_by: string; jobs: number }>(
    `select locked_by, count(*)::int as jobs from graphile_worker._private_jobs
     where locked_by is not null and locked_at < now() - make_interval(secs => $1) group by locked_by`,
    [seconds],
  );
  await client.end();
  if (rows.length) {
    const utils = await makeWorkerUtils({ connectionString });
    await utils.forceUnlockWorkers(rows.map((r) => r.locked_by));
    await utils.release();
  }
  return { workers: rows.map((r) => r.locked_by), jobs: rows.reduce((n, r) => n + r.jobs, 0) };
}

const USAGE = `Usage: npm run admin -- <command> [options]

Commands:
  create-user --email <email> [--username <name>]
      Create a platform user, their own account (as owner) and a first API key.
  add-member --account <acct_...> --email <email> --role <owner|admin|developer|viewer>
      Add a user (created if needed) to an account and issue them an API key.
  set-plan --account <acct_...> --plan <free|starter|business|business_plus|agency|internal> [--force]
      Put an account on a plan by hand (entitlement source "manual"; "free" sets it back to "default").
      A downgrade the account does not fit is refused (downgrade_incompatible) unless --force:
      then over-limit routes are disabled, nothing is deleted, and the rest shows as warnings.
  flag --account <acct_...> --set suspended --reason "<text>"
  flag --app <app_id> --set suspended|takedown --reason "<text>"
  flag --account <acct_...> | --app <app_id> --clear <flag>
      Suspend an account (it can read, not change anything; its apps answer 403), suspend an app
      (403) or take it down (451). The reason shows in the account status; --clear lifts a flag.
  billing-state --account <acct_...> --state active|past_due_grace|restricted [--grace-days <n>]
      Billing access for an account billed by hand: past_due_grace keeps apps online, blocks new
      paid features, and ends after n days (default 7).
  verify-domain --hostname <custom domain>
      Mark a pending custom domain verified without DNS look-ups (sites with no public DNS, tests):
      the body {"dns_verified": true} of the verify endpoint, reserved for the operator.
  unlock-stale-jobs [--older-than-seconds <n>]
      Release the jobs of workers that died mid-job (locked longer than n seconds, default 600).
      Workers of this version release a dead peer's jobs by themselves (heartbeats); this is for
      workers that never beat.
  migrate-blobs --to s3|postgres
      Move the stored release and app file bytes to the S3-compatible bucket (PLATFORM_S3_*) or
      back, while the service runs: each blob is copied, then its row switched; reads follow the
      row. Set PLATFORM_BLOB_STORE on every node for new bytes. Resumable: run it again.

  grant-operator --email <email>
  revoke-operator --email <email>
      Name a user one of this server's operators (the console's Operator section and the
      /v0/operator routes), or no longer. On a fresh install the first user becomes one.
  list-operators
      Who the operators are, and who named them.
  backup [--to <folder>|s3]
      A consistent backup of the whole service (every table from one snapshot, and the app-secrets
      key when it lives in the data dir), taken while the service runs, into PLATFORM_BACKUP_TO
      (default <data dir>/backups, or "s3": the PLATFORM_S3_* bucket under backups/). Keeps the
      newest PLATFORM_BACKUP_KEEP (default 7). PLATFORM_BACKUP_SCHEDULE runs it by itself.
  restore <file> | restore s3:<name>
      A backup into an empty data dir (PLATFORM_DATA_DIR) or an empty DATABASE_URL, with the
      service stopped there. Then start the service: every app, row, file, secret and session is back.

Operator actions (set-plan, flag, billing-state, grant- and revoke-operator) are recorded with who
took them: here, the OS user and host running the command.

Prints one JSON object on its last line, e.g. {"user_id","account_id","api_key"}.
Example:
  npm run admin -- create-user --email you@example.com`;

/** Restores into an empty data dir or database: the secrets key first, then the tables, then the rest of the migrations. */
async function restoreCommand(config: Config, log: Logger, from: string) {
  const local = await localBackupFile(config, from);
  const opened = await openBackup(local.file);
  try {
    await placeSecretsKey(config, opened.dir, opened.manifest);
    const booted = await boot(config, { log, poolSize: 2, checkSecretsKey: false, migrate: false });
    try {
      const summary = await restoreInto(booted.databaseUrl, opened, from);
      await verifySecretsKey(booted.deps.db, booted.deps.secretsKey);
      return summary;
    } finally {
      await booted.close();
    }
  } finally {
    await rm(opened.dir, { recursive: true, force: true });
    await local.cleanup();
  }
}

function fail(message: string, code = 'invalid_request', status = 2): never {
  process.stdout.write(JSON.stringify({ error: { code, message } }) + '\n');
  process.exit(status);
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  if (!command || command === '--help' || command === 'help') {
    process.stderr.write(USAGE + '\n');
    process.exit(command ? 0 : 2);
  }
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[] = [];
  try {
    ({ values, positionals } = parseArgs({
      args: rest,
      options: {
        email: { type: 'string' },
        username: { type: 'string' },
        account: { type: 'string' },
        role: { type: 'string' },
        'older-than-seconds': { type: 'string' },
        plan: { type: 'string' },
        force: { type: 'boolean' },
        app: { type: 'string' },
        set: { type: 'string' },
        clear: { type: 'string' },
        reason: { type: 'string' },
        state: { type: 'string' },
        'grace-days': { type: 'string' },
        hostname: { type: 'string' },
        to: { type: 'string' },
      },
      strict: true,
      allowPositionals: command === 'restore',
    }) as { values: Record<string, string | boolean | undefined>; positionals: string[] });
  } catch (err) {
    fail(`${(err as Error).message}\n${USAGE}`);
  }
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) fail(err.message);
    throw err;
  }
  const text = (name: string): string | undefined =>
    typeof values[name] === 'string' ? (values[name] as string) : undefined;
  const need = (name: string): string => text(name) ?? fail(`--${name} is required for ${command}`);
  const COMMANDS = [
    'create-user',
    'add-member',
    'unlock-stale-jobs',
    'set-plan',
    'flag',
    'billing-state',
    'verify-domain',
    'migrate-blobs',
    'grant-operator',
    'revoke-operator',
    'list-operators',
    'backup',
    'restore',
  ];
  if (!COMMANDS.includes(command)) fail(`Unknown command "${command}".\n${USAGE}`);
  if (command === 'flag' && !text('set') === !text('clear'))
    fail('flag needs either --set <flag> (with --reason) or --clear <flag>');
  const log = createLogger(config.logLevel === 'debug' ? 'debug' : 'warn');
  if (command === 'restore') {
    const from = positionals[0] ?? fail('restore needs the backup file: restore <file>');
    try {
      const result = await restoreCommand(config, log, from);
      process.stdout.write(JSON.stringify(result) + '\n');
      return;
    } catch (err) {
      if (err instanceof ApiError) fail(err.message, err.code, 1);
      throw err;
    }
  }
  // Borrow a running embedded cluster rather than taking it over from the service.
  const booted = await boot(config, {
    log,
    takeOverEmbedded: false,
    poolSize: 2,
    checkSecretsKey: false,
  }); // no command here decrypts app secrets
  try {
    const deps = booted.deps;
    const actor = adminCommandActor();
    const run: Record<string, () => Promise<unknown>> = {
      'create-user': () =>
        createUser(deps.db, {
          email: need('email'),
          username: text('username'),
          planKey: deps.config.defaultPlan,
        }),
      'add-member': () =>
        addMember(deps.db, {
          accountId: need('account'),
          email: need('email'),
          role: need('role'),
        }),
      'unlock-stale-jobs': () =>
        unlockStaleJobs(booted.databaseUrl, Number(text('older-than-seconds') ?? 600)),
      'set-plan': () =>
        operatorSetPlan(deps, actor, {
          accountId: need('account'),
          planKey: need('plan'),
          force: values.force === true,
        }),
      flag: () =>
        operatorSetFlag(deps, actor, {
          accountId: text('account'),
          appId: text('app'),
          flag: (text('set') ?? text('clear'))!,
          reason: text('reason'),
          clear: text('clear') !== undefined,
        }),
      'verify-domain': () => operatorVerify(deps, need('hostname')),
      'grant-operator': () => operatorGrant(deps, actor, { email: need('email') }),
      'revoke-operator': () => operatorGrant(deps, actor, { email: need('email'), revoke: true }),
      'list-operators': async () => ({ operators: await listOperators(deps.db) }),
      backup: () =>
        recordedBackup(
          { db: deps.db, databaseUrl: booted.databaseUrl, config, log },
          { trigger: 'admin', requestedBy: actor.label, to: text('to') },
        ),
      'migrate-blobs': () => {
        const to = need('to');
        if (to !== 's3' && to !== 'postgres') fail('--to must be s3 or postgres');
        let last = 0;
        return migrateBlobs(deps, to, (moved, bytes) => {
          if (Date.now() - last < 1000) return;
          last = Date.now();
          process.stderr.write(`moved ${moved} blobs (${(bytes / 1024 / 1024).toFixed(1)} MiB)\n`);
        });
      },
      'billing-state': () =>
        operatorSetBillingState(deps, actor, {
          accountId: need('account'),
          state: need('state'),
          graceDays: text('grace-days') === undefined ? undefined : Number(text('grace-days')),
        }),
    };
    const result = await run[command]!();
    process.stdout.write(JSON.stringify(result) + '\n');
  } catch (err) {
    if (err instanceof ApiError) {
      await booted.close();
      fail(err.message + (err.details ? ` ${JSON.stringify(err.details)}` : ''), err.code, 1);
    }
    throw err;
  } finally {
    await booted.close();
  }
}

main().catch((err) => {
  process.stderr.write(`admin failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
