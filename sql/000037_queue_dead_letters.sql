-- A message moved to a dead letter queue remembers the queue it failed in, so the team can send it
-- back there (the console's and the CLI's retry).
alter table queue_messages add column dead_from text;
