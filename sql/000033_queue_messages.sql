-- Workers Queues (env.QUEUE.send, a queue(batch) consumer): each message waits here until the
-- app's consumer acknowledges it. `queue_deliver` jobs (graphile-worker, one per app queue by job
-- key) take a batch at a time: a taken message is `inflight` until its lease ends, so a worker that
-- dies mid-batch loses nothing (the messages are taken again: at least once).
create table queue_messages (
  id text primary key,
  app_id text not null references apps (id) on delete cascade,
  queue text not null,
  content_type text not null check (content_type in ('text', 'json', 'bytes', 'v8')),
  -- text and json as sent, bytes as base64, v8 as the structured-clone serialisation's JSON
  body text not null,
  size integer not null,
  attempts integer not null default 0,
  state text not null default 'ready' check (state in ('ready', 'inflight')),
  visible_at timestamptz not null default now(),
  lease_until timestamptz,
  created_at timestamptz not null default now()
);
create index queue_messages_due_idx on queue_messages (app_id, queue, visible_at) where state = 'ready';
create index queue_messages_lease_idx on queue_messages (lease_until) where state = 'inflight';
