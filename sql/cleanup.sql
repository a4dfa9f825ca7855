-- Cleanup recipe: delete outbox rows that are older than a retention period AND that the relay has confirmed.
--
-- Do you need it?
--   * With the insert-then-delete pattern (sql/outbox_table.sql) the table stays empty: no cleanup at all.
--   * With a partitioned outbox (sql/outbox_partitioned.sql), drop old partitions instead: cheaper than DELETE.
--   * Otherwise rows accumulate and something must delete them: this file.
--
-- Why "confirmed"? The relay reads events from the WAL, not from the table, so deleting a row never stops its
-- event from being published. The rows are kept for one reason: if the replication slot is ever lost (dropped,
-- or invalidated by max_slot_wal_keep_size), the events after the slot's last confirmed position must be found in
-- the table and published again (a backfill). So a row may go once it is older than your retention AND its
-- transaction is before the relay's confirmed position, pg_replication_slots.confirmed_flush_lsn: the relay
-- confirms an LSN only after the broker acknowledged every record before it.
--
-- Rows carry no LSN, so the procedure relates times to LSNs with marks: each run records
-- (pg_current_wal_insert_lsn(), a time before which every transaction had already ended). Once the slot's
-- confirmed_flush_lsn passes a mark's LSN, every row whose transaction started before the mark's time was
-- relayed. Assumptions: created_at is its default, now() (the inserting transaction's start time), not a value
-- the application sets; and the procedure runs as a superuser or a member of pg_read_all_stats, so that it sees
-- every session's transaction start. While prepared (two-phase) transactions exist, no mark is taken.
--
-- Prerequisite: the outbox table (sql/outbox_table.sql). Run as its owner:
--   psql -X -v ON_ERROR_STOP=1 -d app -f sql/cleanup.sql
-- then periodically (cron, pg_cron), outside a transaction block (the procedure commits after each batch):
--   CALL public.outbox_cleanup('outbox_relay', interval '7 days');
-- The first call only takes a mark; later calls delete what the earlier marks prove relayed.
--
-- After a lost slot, finish the backfill before the next cleanup: a re-created slot's position says nothing about
-- the events in the gap.
--
-- PostgreSQL 14 to 17. Idempotent.

-- Deleting by age needs an index on the age.
CREATE INDEX IF NOT EXISTS outbox_created_at_idx ON public.outbox (created_at);

CREATE TABLE IF NOT EXISTS public.outbox_cleanup_mark (
  taken_at    timestamptz PRIMARY KEY,
  wal_lsn     pg_lsn      NOT NULL,  -- pg_current_wal_insert_lsn() when the mark was taken
  safe_before timestamptz NOT NULL   -- every transaction that started before this had ended by then
);

CREATE OR REPLACE PROCEDURE public.outbox_cleanup(slot text, keep interval DEFAULT interval '7 days',
                                                  batch_size int DEFAULT 10000)
LANGUAGE plpgsql
AS $$
DECLARE
  confirmed pg_lsn;
  mark public.outbox_cleanup_mark;
  cutoff timestamptz;
  deleted bigint;
  total bigint := 0;
  started timestamptz;
  oldest_running timestamptz;
BEGIN
  IF NOT pg_has_role(current_user, 'pg_read_all_stats', 'MEMBER') THEN
    RAISE EXCEPTION 'outbox_cleanup: run it as a superuser or a member of pg_read_all_stats'
      USING HINT = 'Without it, other sessions'' transaction start times are hidden and rows could be deleted '
                   'before the relay confirmed them.';
  END IF;

  SELECT s.confirmed_flush_lsn INTO confirmed FROM pg_replication_slots s WHERE s.slot_name = slot;
  IF confirmed IS NULL THEN
    RAISE NOTICE 'outbox_cleanup: replication slot "%" is missing (or has no confirmed position): nothing deleted',
      slot;
    RETURN;
  END IF;

  -- 1. Delete what the newest mark at or before the confirmed position proves relayed.
  SELECT * INTO mark FROM public.outbox_cleanup_mark m WHERE m.wal_lsn <= confirmed
  ORDER BY m.taken_at DESC LIMIT 1;
  IF FOUND THEN
    cutoff := least(mark.safe_before, now() - keep);
    LOOP
      DELETE FROM public.outbox
      WHERE id IN (SELECT o.id FROM public.outbox o WHERE o.created_at < cutoff LIMIT batch_size)
        AND created_at < cutoff;
      GET DIAGNOSTICS deleted = ROW_COUNT;
      total := total + deleted;
      COMMIT;  -- short transactions: locks and dead rows do not pile up
      EXIT WHEN deleted < batch_size;
    END LOOP;
    DELETE FROM public.outbox_cleanup_mark m WHERE m.taken_at < mark.taken_at;
    RAISE NOTICE 'outbox_cleanup: deleted % rows created before % (slot "%" confirmed %)',
      total, cutoff, slot, confirmed;
  ELSE
    RAISE NOTICE 'outbox_cleanup: slot "%" (confirmed %) has not passed any mark yet: nothing deleted', slot, confirmed;
  END IF;

  -- 2. Take a new mark for a later run.
  IF EXISTS (SELECT 1 FROM pg_prepared_xacts) THEN
    RAISE NOTICE 'outbox_cleanup: prepared transactions exist: no new mark taken';
    RETURN;
  END IF;
  started := clock_timestamp();
  SELECT min(a.xact_start) INTO oldest_running
  FROM pg_stat_activity a
  WHERE a.xact_start IS NOT NULL AND a.pid <> pg_backend_pid() AND a.backend_type <> 'walsender';
  INSERT INTO public.outbox_cleanup_mark (taken_at, wal_lsn, safe_before)
  VALUES (started, pg_current_wal_insert_lsn(), least(started, coalesce(oldest_running, started)))
  ON CONFLICT (taken_at) DO NOTHING;
END
$$;

-- How far behind the relay is, and how much WAL its slot holds:
--   SELECT slot_name, active, confirmed_flush_lsn, wal_status,
--          pg_size_pretty(pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)) AS lag,
--          pg_size_pretty(pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)) AS retained_wal
--   FROM pg_replication_slots WHERE slot_name = 'outbox_relay';
