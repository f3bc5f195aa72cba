-- Inbound webhook deliveries seen, for de-duplication by the provider's delivery id.
create table webhook_deliveries (
  app_id text not null references apps (id),
  webhook_name text not null,
  delivery_id text not null,
  received_at timestamptz not null default now(),
  primary key (app_id, webhook_name, delivery_id)
);
create index webhook_deliveries_received_idx on webhook_deliveries (received_at);
