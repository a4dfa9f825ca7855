-- The default outbox table: the one `outbox-relay init --create-table` creates (src/pg/admin.cc,
-- CreateOutboxTableSql), column for column. Its column names are the relay's defaults, so the minimal relay.yaml
-- needs no `outbox.fields.*` keys. This is the layout of Debezium's Outbox Event Router, so a switch from
-- Debezium needs no change to the table.
--
-- Run as the owner of the application's schema (not as the relay's role):
--   psql -X -v ON_ERROR_STOP=1 -d app -f sql/outbox_table.sql
-- Then sql/publication.sql (before the slot is created) and, for the relay's login, sql/role.sql.
--
-- PostgreSQL 14 to 17. Idempotent.

CREATE TABLE IF NOT EXISTS public.outbox (
  -- The event id: the record's `id` header, what consumers deduplicate on (sql/inbox.sql).
  -- outbox.fields.id
  id            uuid        PRIMARY KEY,
  -- The aggregate's kind ("order", "customer"). Not routed on by default; set `outbox.route.by: aggregatetype`
  -- (Debezium's default) to put all of an aggregate's events in one topic, in commit order.
  aggregatetype text        NOT NULL,
  -- The aggregate's id: the record key, so that one aggregate's events land in one partition, in commit order.
  -- outbox.fields.key
  aggregateid   text        NOT NULL,
  -- The event type ("OrderCreated"): names the topic, outbox.event.<type> by default.
  -- outbox.route.by / outbox.route.topic
  type          text        NOT NULL,
  -- The record value, exactly as PostgreSQL prints it (jsonb prints normalized: {"a": 1}). json, text and bytea
  -- (sent as raw bytes) work too. NULL gives a null value (a tombstone).
  -- outbox.fields.payload
  payload       jsonb,
  -- Not read by the relay unless `outbox.fields.timestamp: created_at` (then it is the record timestamp instead
  -- of the transaction's commit time). Useful for cleanup (sql/cleanup.sql) and partitioning
  -- (sql/outbox_partitioned.sql).
  created_at    timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE public.outbox IS
  'Transactional outbox: rows inserted here in the business transaction are relayed to Kafka by outbox-relay';

-- No REPLICA IDENTITY change is needed: the publication publishes inserts only, and an INSERT always carries the
-- whole new row.

-- Writing an event: insert it in the same transaction as the business change it describes. It is published if
-- and only if the transaction commits.
--
-- The insert-then-delete pattern: the relay reads the WAL, not the table, so a row deleted in the same
-- transaction is still published with its full payload (the publication does not publish the DELETE). The table
-- then stays empty and needs no cleanup, no vacuum of dead events piles up in indexes, and there is nothing to
-- partition. The price: no rows are left to backfill from if a replication slot is ever lost (see sql/cleanup.sql
-- and the README's "Failure modes").
--
-- The example below ends with ROLLBACK so that running this file publishes nothing; your code ends with COMMIT.
BEGIN;
-- The business change, e.g.:  UPDATE orders SET status = 'paid' WHERE id = 42;
INSERT INTO public.outbox (id, aggregatetype, aggregateid, type, payload)
VALUES ('6f1c3a52-9d1e-4c47-b0a8-0d3f5e2b7c11', 'order', '42', 'OrderPaid',
        '{"orderId": 42, "total": "99.50", "currency": "EUR"}');
DELETE FROM public.outbox WHERE id = '6f1c3a52-9d1e-4c47-b0a8-0d3f5e2b7c11';
ROLLBACK;  -- COMMIT in real code: the relay then publishes one record to topic outbox.event.OrderPaid,
           -- key "42", header id=6f1c3a52-..., value {"total": "99.50", "orderId": 42, "currency": "EUR"}
           -- (jsonb's normalized output: keys in jsonb's own order).

-- Application code usually generates the id (a UUID) itself, so that it can log it; gen_random_uuid() (built in
-- since PostgreSQL 13) works too:
--   INSERT INTO public.outbox (id, aggregatetype, aggregateid, type, payload)
--   VALUES (gen_random_uuid(), 'order', '42', 'OrderPaid', '{"orderId": 42}');
