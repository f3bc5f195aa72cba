/**
 * A backup as the server records it: a `backup_runs` row from queued to succeeded or failed, so the
 * Operator section lists every backup (when, size, result) and /metrics sees a failing schedule.
 * A failure is also an entry in the operators' action log, where operators look for what happened.
 */
import { sql } from 'kysely';
import type { Db, Executor } from '../db/database.ts';
import type { Config } from '../config.ts';
import type { BackupTrigger } from '../db/tables/operations.ts';
import type { Logger } from '../logger.ts';
import { newId } from '../lib/ids.ts';
import { recordAction } from '../operators/queries.ts';
import { runBackup } from './run.ts';

export type BackupRun = {
  backup_id: string;
  trigger: BackupTrigger;
  requested_by: string | null;
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  queued_at: string;
  started_at: string | null;
  finished_at: string | null;
  location: string | null;
  bytes: number | null;
  rows: number | null;
  error: string | null;
};

/** A backup the console asked for: queued now, run by the job worker (`platform_backup` with its id). */
export async function queueBackupRun(
  db: Executor,
  input: { trigger: BackupTrigger; requestedBy: string | null },
): Promise<string> {
  const id = newId('bak');
  await db
    .insertInto('backup_runs')
    .values({ id, trigger: input.trigger, requested_by: input.requestedBy })
    .execute();
  return id;
}

/** A backup an operator asked for: its queued run, the job that takes it and the action log entry, at once. */
export async function queueConsoleBackup(
  db: Db,
  actor: { userId: string | null; label: string },
): Promise<string> {
  return db.transaction().execute(async (trx) => {
    const id = await queueBackupRun(trx, { trigger: 'console', requestedBy: actor.label });
    await sql`select graphile_worker.add_job('platform_backup', ${JSON.stringify({ backup_id: id })}::json, max_attempts => 1)`.execute(
      trx,
    );
    await recordAction(trx, {
      actorUserId: actor.userId,
      actorLabel: actor.label,
      action: 'start_backup',
      detail: { backup_id: id },
    });
    return id;
  });
}

/** Runs a backup and records it; a failure is recorded, logged and thrown again. */
export async function recordedBackup(
  input: { db: Db; databaseUrl: string; config: Config; log: Logger },
  options: { trigger: BackupTrigger; requestedBy?: string | null; runId?: string; to?: string },
) {
  const { db } = input;
  let id = options.runId;
  if (id) {
    const started = await db
      .updateTable('backup_runs')
      .set({ status: 'running', started_at: new Date() })
      .where('id', '=', id)
      .where('status', '=', 'queued')
      .returning('id')
      .executeTakeFirst();
    if (!started) return undefined; // run already, by another worker after a retry
  } else {
    id = newId('bak');
    await db
      .insertInto('backup_runs')
      .values({
        id,
        trigger: options.trigger,
        requested_by: options.requestedBy ?? null,
        status: 'running',
        started_at: new Date(),
      })
      .execute();
  }
  try {
    const r = await runBackup(input, { to: options.to, runId: id });
    await db
      .updateTable('backup_runs')
      .set({
        status: 'succeeded',
        finished_at: new Date(),
        location: r.location,
        bytes: r.bytes,
        rows: r.rows,
      })
      .where('id', '=', id)
      .execute();
    return { backup_id: id, ...r };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    await db
      .updateTable('backup_runs')
      .set({ status: 'failed', finished_at: new Date(), error: message.slice(0, 2000) })
      .where('id', '=', id)
      .execute()
      .catch(() => {});
    await recordAction(db, {
      actorUserId: null,
      actorLabel:
        options.trigger === 'schedule'
          ? 'backup schedule'
          : (options.requestedBy ?? options.trigger),
      action: 'backup_failed',
      detail: { backup_id: id, trigger: options.trigger, error: message.slice(0, 500) },
    }).catch(() => {});
    input.log.error('backup failed', { backup_id: id, trigger: options.trigger, error: message });
    throw err;
  }
}

export async function listBackupRuns(db: Db, limit = 50, id?: string): Promise<BackupRun[]> {
  let q = db.selectFrom('backup_runs').selectAll();
  if (id) q = q.where('id', '=', id);
  const rows = await q.orderBy('queued_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  return rows.map((r) => ({
    backup_id: r.id,
    trigger: r.trigger,
    requested_by: r.requested_by,
    status: r.status,
    queued_at: r.queued_at.toISOString(),
    started_at: iso(r.started_at),
    finished_at: iso(r.finished_at),
    location: r.location,
    bytes: r.bytes === null ? null : Number(r.bytes),
    rows: r.rows === null ? null : Number(r.rows),
    error: r.error,
  }));
}

/** The newest success and failure, for /metrics (cluster-wide: every node reads the same rows). */
export async function lastBackupTimes(db: Db) {
  const rows = await db
    .selectFrom('backup_runs')
    .select(['status', (eb) => eb.fn.max('finished_at').as('at')])
    .where('status', 'in', ['succeeded', 'failed'])
    .groupBy('status')
    .execute();
  const at = (s: string) => rows.find((r) => r.status === s)?.at ?? null;
  return { succeeded: at('succeeded') as Date | null, failed: at('failed') as Date | null };
}

/** What an operator runs to restore the newest backup, as this server is configured. */
export function restoreCommandFor(config: Config): string {
  const from = config.backups.to === 's3' ? 's3:<name>' : `${config.backups.to}/<name>.tar.gz`;
  const target = config.databaseUrl
    ? 'DATABASE_URL=<an empty database>'
    : 'PLATFORM_DATA_DIR=<an empty folder>';
  return `${target} npm run admin -- restore ${from}`;
}
