import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';
import type { Mail } from './mailer.ts';

/** Queues `mail` for the `platform_email` job inside the caller's transaction: it is sent only if that commits. */
export async function queueMail(db: Executor, mail: Mail): Promise<void> {
  await sql`select graphile_worker.add_job('platform_email', ${JSON.stringify(mail)}::json, max_attempts => 5)`.execute(
    db,
  );
}
