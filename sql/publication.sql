-- The publication the relay streams: the outbox table, inserts only. What `outbox-relay init` creates
-- (src/pg/admin.cc, CreatePublicationSql) when `source.publication` does not exist yet.
--
-- Prerequisite: the outbox table (sql/outbox_table.sql). For a partitioned outbox use the publication in
-- sql/outbox_partitioned.sql instead (it needs publish_via_partition_root).
--
-- Run as the table's owner (CREATE PUBLICATION needs CREATE on the database and ownership of the table):
--   psql -X -v ON_ERROR_STOP=1 -d app -f sql/publication.sql
--
-- ORDER MATTERS: create the publication BEFORE the replication slot. On PostgreSQL 15 a slot created first fails
-- forever with 42704 `publication "outbox_pub" does not exist` on the changes it decodes from before the
-- publication existed. `outbox-relay init` does it in this order.
--
-- PostgreSQL 14 to 17. Idempotent.

DO $outbox_relay$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = 'outbox_pub') THEN
    -- publish = 'insert': UPDATE, DELETE and TRUNCATE of the outbox are not even sent, so the table needs no
    -- REPLICA IDENTITY and the insert-then-delete pattern costs nothing on the stream.
    CREATE PUBLICATION outbox_pub FOR TABLE public.outbox WITH (publish = 'insert');
  END IF;
END
$outbox_relay$;

-- Check it: the relay's `check` command runs the same test (the publication exists, covers the table and
-- publishes inserts).
SELECT p.pubname, p.pubinsert, t.schemaname, t.tablename
FROM pg_publication p
LEFT JOIN pg_publication_tables t ON t.pubname = p.pubname
WHERE p.pubname = 'outbox_pub';

-- Variants (PostgreSQL 15+):
--
-- A row filter: only matching rows are published. It is evaluated on the new row; NULL means not published.
-- Only immutable built-in functions and operators, no user-defined functions, no system columns.
--   CREATE PUBLICATION outbox_pub FOR TABLE public.outbox WHERE (type <> 'Internal') WITH (publish = 'insert');
--
-- A column list: limits what is sent. Every column the relay is configured to read (outbox.fields.*,
-- outbox.route.by, outbox.fields.additional) must be in it: a configured column missing from what is published
-- stops the relay (exit 1, naming the column and the LSN) rather than producing incomplete records.
--   CREATE PUBLICATION outbox_pub FOR TABLE public.outbox (id, aggregateid, type, payload) WITH (publish = 'insert');
--
-- Names with upper-case letters or other special characters must be double-quoted in SQL ("OutboxPub"); in
-- relay.yaml give the name as it is (source.publication: OutboxPub). Lower-case names avoid the question.
--
-- Do not drop the publication while its slot exists: the stream then fails with 42704 on the next change (the
-- relay exits 1), and on PostgreSQL 15 every change decoded from before a re-created publication existed keeps
-- failing the same way, so the slot cannot get past that WAL: recovery is a new slot and a backfill (README,
-- "Failure modes"). ALTER PUBLICATION ... SET (...) is safe; it applies to changes decoded after it.
