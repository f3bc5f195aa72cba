import { Hono } from 'hono';
import { pageQuery } from '../http/paging.ts';
import * as v from 'valibot';
import { appAccess } from '../apps/access.ts';
import type { Env } from '../http/env.ts';
import { operation } from '../http/operation.ts';
import { query, queryOf } from '../http/validate.ts';
import { eventById, eventGroups, eventTypes, listEvents, type EventRow } from './queries.ts';
import { EventGroupList, EventPage, type EventSummary, EventTypeList } from './schemas.ts';

const CURSOR_PREFIX = 'ev1.';

export function encodeCursor(id: number): string {
  return CURSOR_PREFIX + Buffer.from(String(id)).toString('base64url');
}
function decodeCursor(cursor: string): number | undefined {
  if (!cursor.startsWith(CURSOR_PREFIX)) return undefined;
  const n = Number(Buffer.from(cursor.slice(CURSOR_PREFIX.length), 'base64url').toString());
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

export const EventsQuery = v.strictObject({
  type: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^[a-z][a-z0-9_.]{0,99}$/, 'must be an event type such as release.created'),
    ),
  ),
  severity: v.optional(
    v.picklist(['debug', 'info', 'warn', 'error'], 'must be debug, info, warn or error'),
  ),
  release_id: v.optional(
    v.pipe(v.string(), v.regex(/^rel_[0-9a-z]{1,64}$/, 'must be a release id (rel_...)')),
  ),
  /** free text: in the message or anywhere in the metadata, case-insensitive */
  q: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1),
      v.maxLength(200),
      v.check((s) => !s.includes('\0'), 'must not contain NUL'),
    ),
  ),
  ...pageQuery(decodeCursor),
});

const GroupsQuery = v.strictObject({
  type: EventsQuery.entries.type,
  severity: EventsQuery.entries.severity,
  release_id: EventsQuery.entries.release_id,
  q: EventsQuery.entries.q,
});

/** EventSummary. */
export function toEventSummary(e: EventRow): EventSummary {
  return {
    app_event_id: `evt_${e.id}`,
    release_id: e.release_id,
    app_user_id: e.app_user_id,
    api_key_id: e.api_key_id,
    request_id: e.request_id,
    type: e.type,
    event_type: e.type,
    severity: e.severity,
    level: e.severity,
    message: e.message,
    metadata: e.metadata as Record<string, unknown>,
    created_at: e.created_at.toISOString(),
  };
}

const list = operation({
  operationId: 'listEvents',
  summary: 'Read the app event log, newest first',
  description:
    'Pass the `cursor` of a page back to read the next (older) page; it is null on the last page.',
  tags: ['Events'],
  responses: { 200: EventPage },
});

const types = operation({
  operationId: 'listEventTypes',
  summary: "The event types in this app's log, with how many of each and the latest",
  tags: ['Events'],
  responses: { 200: EventTypeList },
});
const groups = operation({
  operationId: 'listEventGroups',
  summary: 'Identical events grouped, with a count: the same type, level and message',
  description:
    'The 100 most recent groups, filtered like the log (`severity=error` for an error list), each with its first and last time and the latest occurrence in full.',
  tags: ['Events'],
  responses: { 200: EventGroupList },
});

/** `/v0/apps/:app_id/events`: members of the app's account only. */
export function eventRoutes(): Hono<Env> {
  const r = new Hono<Env>();
  r.get('/:app_id/events', list, appAccess('events.read'), query(EventsQuery), async (c) => {
    const q = queryOf(c, EventsQuery);
    const limit = q.limit ?? 100;
    const rows = await listEvents(c.var.deps.db, {
      appId: c.var.app.id,
      type: q.type,
      severity: q.severity,
      releaseId: q.release_id,
      text: q.q,
      beforeId: q.cursor ? decodeCursor(q.cursor) : undefined,
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    const cursor = rows.length > limit ? encodeCursor(page[page.length - 1]!.id) : null;
    return list.reply(c, 200, { app_id: c.var.app.id, events: page.map(toEventSummary), cursor });
  });

  r.get('/:app_id/event-types', types, appAccess('events.read'), async (c) => {
    const rows = await eventTypes(c.var.deps.db, c.var.app.id);
    return types.reply(c, 200, {
      app_id: c.var.app.id,
      types: rows.map((t) => ({
        type: t.type,
        count: Number(t.count),
        last_at: new Date(t.last_at as unknown as string).toISOString(),
      })),
    });
  });

  r.get(
    '/:app_id/event-groups',
    groups,
    appAccess('events.read'),
    query(GroupsQuery),
    async (c) => {
      const q = queryOf(c, GroupsQuery);
      const { db } = c.var.deps;
      const rows = await eventGroups(db, c.var.app.id, {
        type: q.type,
        severity: q.severity,
        releaseId: q.release_id,
        text: q.q,
        limit: 100,
      });
      const out = [];
      for (const g of rows) {
        const last = await eventById(db, c.var.app.id, Number(g.last_id));
        if (!last) continue; // pruned by retention between the two reads
        out.push({
          type: g.type,
          severity: g.severity,
          message: g.message,
          count: Number(g.count),
          first_at: new Date(g.first_at as unknown as string).toISOString(),
          last_at: new Date(g.last_at as unknown as string).toISOString(),
          last: toEventSummary(last),
        });
      }
      return groups.reply(c, 200, { app_id: c.var.app.id, groups: out });
    },
  );
  return r;
}
