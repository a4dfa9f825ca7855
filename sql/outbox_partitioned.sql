-- A time-partitioned outbox: one partition per calendar month (UTC), so that old events are removed by dropping
-- a whole partition (no DELETE, no vacuum of dead rows, no index bloat) while recent ones stay available for a
-- backfill. Use it instead of sql/outbox_table.sql when you keep events for a while; with the insert-then-delete
-- pattern (see sql/outbox_table.sql) the table stays empty and needs neither.
--
-- The relay is configured exactly as for the plain table (`outbox.table: public.outbox`), because the
-- publication below publishes the partitions' rows as rows of the root table (publish_via_partition_root).
--
-- Run as the owner of the application's schema, BEFORE `outbox-relay init` (init creates the publication only
-- when it is missing, and the one it creates lacks publish_via_partition_root):
--   psql -X -v ON_ERROR_STOP=1 -d app -f sql/outbox_partitioned.sql
--
-- PostgreSQL 14 to 17. Idempotent.

CREATE TABLE IF NOT EXISTS public.outbox (
  id            uuid        NOT NULL,
  aggregatetype text        NOT NULL,
  aggregateid   text        NOT NULL,
  type          text        NOT NULL,
  payload       jsonb,
  created_at    timestamptz NOT NULL DEFAULT now(),
  -- A unique key of a partitioned table must contain the partition key. Event ids are UUIDs, so they stay
  -- unique in practice; consumers deduplicate on the id anyway (sql/inbox.sql).
  PRIMARY KEY (id, created_at)
) PARTITION BY RANGE (created_at);

COMMENT ON TABLE public.outbox IS
  'Transactional outbox, partitioned by month (UTC): relayed to Kafka by outbox-relay';

-- Creates the partitions public.outbox_YYYY_MM for the current month (UTC) and the next `months_ahead` ones.
-- Idempotent: run it from cron (or pg_cron) at least monthly, e.g. daily:
--   SELECT public.outbox_create_partitions(3);
CREATE OR REPLACE FUNCTION public.outbox_create_partitions(months_ahead int DEFAULT 3)
RETURNS void
LANGUAGE plpgsql
AS $$
DECLARE
  -- Month arithmetic on timestamp without time zone, bounds converted from UTC: the same bounds whatever the
  -- session's TimeZone is.
  this_month timestamp := date_trunc('month', now() AT TIME ZONE 'UTC');
  month_start timestamp;
BEGIN
  FOR i IN 0 .. months_ahead LOOP
    month_start := this_month + make_interval(months => i);
    EXECUTE format('CREATE TABLE IF NOT EXISTS public.%I PARTITION OF public.outbox FOR VALUES FROM (%L) TO (%L)',
                   'outbox_' || to_char(month_start, 'YYYY_MM'),
                   month_start AT TIME ZONE 'UTC',
                   (month_start + interval '1 month') AT TIME ZONE 'UTC');
  END LOOP;
END
$$;

SELECT public.outbox_create_partitions(3);

-- A safety net: a row outside every monthly partition (the partitions were not created in time, or a wrong
-- created_at) lands here instead of failing the business transaction. It should stay empty: alert when
--   SELECT count(*) FROM public.outbox_default;
-- is not 0, then create the missing partitions (CREATE ... PARTITION OF fails while the default partition holds
-- rows of the new partition's range: move them first).
CREATE TABLE IF NOT EXISTS public.outbox_default PARTITION OF public.outbox DEFAULT;

-- The publication. publish_via_partition_root = true makes pgoutput send every partition's inserts as inserts into
-- public.outbox; without it they arrive under the partitions' names (public.outbox_2025_01, ...), which the relay
-- does not match, and nothing is published. Partitions created later are covered automatically.
-- Create the publication before the replication slot (PostgreSQL 15 fails forever on changes from before it).
DO $outbox_relay$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = 'outbox_pub') THEN
    CREATE PUBLICATION outbox_pub FOR TABLE public.outbox
      WITH (publish = 'insert', publish_via_partition_root = true);
  END IF;
END
$outbox_relay$;
-- An existing publication can be switched (the relay sees the change from the next transaction on):
--   ALTER PUBLICATION outbox_pub SET (publish = 'insert', publish_via_partition_root = true);
-- `outbox-relay check` reports a publication that does not cover public.outbox as published.

-- Dropping old partitions.
--
-- The relay reads events from the WAL, not from the table: dropping a partition never loses an event that is
-- still to be relayed. The rows are kept only so that unpublished events can be found and re-published if the
-- replication slot is ever lost (README, "Failure modes"), and for audit. Keep at least as many months as you
-- would need for such a backfill, and never drop a partition holding rows newer than the slot's
-- confirmed_flush_lsn (the relay would be months behind; `outbox-relay status` shows it).
--
-- Drops every monthly partition that ended more than `keep_months` whole months before the current month (UTC),
-- and returns the names it dropped. DROP TABLE on a partition takes an ACCESS EXCLUSIVE lock on public.outbox for
-- a moment, so it waits at most lock_timeout (5 s) for running inserts rather than queueing the writers behind it:
--   SELECT * FROM public.outbox_drop_partitions(3);
-- Without any exclusive lock on the parent (PostgreSQL 14+), detach first, outside a transaction block:
--   ALTER TABLE public.outbox DETACH PARTITION public.outbox_2025_01 CONCURRENTLY;
--   DROP TABLE public.outbox_2025_01;
-- (DETACH ... CONCURRENTLY is refused while a default partition exists: drop outbox_default first if you use it.)
CREATE OR REPLACE FUNCTION public.outbox_drop_partitions(keep_months int DEFAULT 3)
RETURNS SETOF text
LANGUAGE plpgsql
AS $$
DECLARE
  oldest_kept text := 'outbox_' || to_char(date_trunc('month', now() AT TIME ZONE 'UTC')
                                            - make_interval(months => keep_months), 'YYYY_MM');
  partition_name text;
BEGIN
  PERFORM set_config('lock_timeout', '5s', true);
  FOR partition_name IN
    SELECT c.relname
    FROM pg_inherits i
    JOIN pg_class c ON c.oid = i.inhrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE i.inhparent = 'public.outbox'::regclass
      AND n.nspname = 'public'
      AND c.relname ~ '^outbox_[0-9]{4}_[0-9]{2}$'
      AND c.relname < oldest_kept
    ORDER BY c.relname
  LOOP
    EXECUTE format('DROP TABLE public.%I', partition_name);
    RETURN NEXT partition_name;
  END LOOP;
END
$$;

-- What is there:
--   SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) AS bounds, pg_size_pretty(pg_total_relation_size(c.oid))
--   FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
--   WHERE i.inhparent = 'public.outbox'::regclass ORDER BY c.relname;
