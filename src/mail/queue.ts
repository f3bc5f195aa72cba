import { sql } from 'kysely';
import type { Executor } from '../db/database.ts';
import type { LinkRef } from './links.ts';

/** A message as queued: `text` has LINK_SLOT where the link goes, and `link` names its token row. */
export type QueuedMail = { to: string; subject: string; text: string; link?: LinkRef };

/** Queues `mail` for the `platform_email` job inside the caller's transaction: it is sent only if that commits. */
export async function queueMail(db: Executor, mail: QueuedMail): Promise<void> {
  await sql`select graphile_worker.add_job('platform_email', ${JSON.stringify(mail)}::json, max_attempts => 5)`.execute(
    db,
  );
}
