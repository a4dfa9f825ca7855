-- Consumer side: the inbox table that makes a consumer process each event once.
--
-- The relay delivers at least once: after a crash, a broker outage or a PostgreSQL restart it may publish again
-- the events of transactions whose end the server had not durably confirmed, and a consumer that rewinds its
-- offsets reads records again. Every record carries the event id in its `id` header (the outbox row's id), so a
-- consumer that keeps its state in PostgreSQL records each id it processed, in the same transaction as the
-- effects of processing it: a second delivery finds the id and changes nothing.
--
-- This table lives in the CONSUMER's database (not the outbox's). Run as the consumer's schema owner:
--   psql -X -v ON_ERROR_STOP=1 -d consumer_db -f sql/inbox.sql
--
-- PostgreSQL 14 to 17. Idempotent.

CREATE TABLE IF NOT EXISTS processed_events (
  event_id     uuid        PRIMARY KEY,             -- the record's `id` header (use text if your ids are not UUIDs)
  processed_at timestamptz NOT NULL DEFAULT now()
);

-- Old entries can go once a redelivery of their event is no longer possible: keep them at least as long as the
-- topics' retention.ms (a consumer reset to the earliest offset re-reads everything still retained), e.g.
--   DELETE FROM processed_events WHERE processed_at < now() - interval '30 days';
CREATE INDEX IF NOT EXISTS processed_events_processed_at_idx ON processed_events (processed_at);

-- The pattern, for each record, in ONE transaction of the consumer:
--
--   BEGIN;
--   INSERT INTO processed_events (event_id) VALUES ($1)     -- $1 = the record's `id` header
--   ON CONFLICT (event_id) DO NOTHING
--   RETURNING event_id;
--   -- no row returned: a duplicate. Apply nothing; COMMIT (or ROLLBACK) and acknowledge the record.
--   -- one row returned: the first delivery. Apply the effects here, in this same transaction.
--   COMMIT;
--   -- then commit the Kafka offset. A crash between the two re-reads the record, which is then a duplicate.
--
-- The INSERT comes FIRST: it takes the row lock on the id, so two consumers racing on the same event serialize
-- there, and the loser sees the conflict instead of applying the effects twice.
--
-- An example with a stand-in for the consumer's own state, ending with ROLLBACK so that running this file leaves
-- nothing behind (the second delivery of the same id applies nothing):
BEGIN;
CREATE TEMPORARY TABLE order_totals (order_id text PRIMARY KEY, paid numeric NOT NULL) ON COMMIT DROP;

-- First delivery of event 6f1c3a52-...: the INSERT returns the id, so the effect is applied.
WITH first_delivery AS (
  INSERT INTO processed_events (event_id) VALUES ('6f1c3a52-9d1e-4c47-b0a8-0d3f5e2b7c11')
  ON CONFLICT (event_id) DO NOTHING
  RETURNING event_id
)
INSERT INTO order_totals (order_id, paid)
SELECT '42', 99.50 FROM first_delivery
ON CONFLICT (order_id) DO UPDATE SET paid = order_totals.paid + excluded.paid;

-- Second delivery of the same event: the INSERT returns nothing, so nothing is applied.
WITH first_delivery AS (
  INSERT INTO processed_events (event_id) VALUES ('6f1c3a52-9d1e-4c47-b0a8-0d3f5e2b7c11')
  ON CONFLICT (event_id) DO NOTHING
  RETURNING event_id
)
INSERT INTO order_totals (order_id, paid)
SELECT '42', 99.50 FROM first_delivery
ON CONFLICT (order_id) DO UPDATE SET paid = order_totals.paid + excluded.paid;

SELECT order_id, paid FROM order_totals;  -- 42 | 99.50, not 199.00
ROLLBACK;

-- Ordering: records with the same key reach their partition in commit order, and a redelivery may repeat a
-- suffix, so the first occurrence of each id is in commit order. Skipping ids already processed therefore keeps
-- each key's events in order.
