-- The relay's least-privilege role: LOGIN and REPLICATION, not a superuser, owning nothing. The same statements
-- `outbox-relay init --print` prints (src/pg/admin.cc, CreateRoleSql), plus CONNECT on the current database.
--
-- Prerequisite: the outbox table (sql/outbox_table.sql or sql/outbox_partitioned.sql).
-- Run as a superuser or a role with CREATEROLE, in the application's database:
--   psql -X -v ON_ERROR_STOP=1 -d app -f sql/role.sql
--
-- What the role needs, and why:
--   LOGIN, REPLICATION   open a replication connection (replication=database), IDENTIFY_SYSTEM,
--                        CREATE_REPLICATION_SLOT (only with source.create_slot: true) and START_REPLICATION.
--   CONNECT              the database holding the outbox (granted to PUBLIC by default; needed when that grant
--                        was revoked).
--   USAGE, SELECT        not needed to stream (pgoutput sends the rows from the WAL); kept for a snapshot backfill
--                        after a lost slot, which reads the table.
-- Everything else the relay reads (pg_replication_slots, pg_publication, pg_roles, SHOW wal_level,
-- pg_current_wal_lsn()) is readable by any role.
--
-- Creating the table and the publication needs more (CREATE on the database, ownership of the table): run
-- `outbox-relay init` once as the schema owner, e.g. `outbox-relay init -c relay.yaml --set
-- source.conninfo='host=... dbname=app user=app_owner'`, or run the SQL `init --print` prints. The slot is not
-- owned by anyone: a slot created by the admin is usable by this role.
--
-- PostgreSQL 14 to 17. Idempotent.

DO $outbox_relay$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'outbox_relay') THEN
    CREATE ROLE outbox_relay LOGIN REPLICATION NOSUPERUSER NOCREATEDB NOCREATEROLE;
  END IF;
END
$outbox_relay$;

-- Set its password yourself, e.g. in psql with  \password outbox_relay  (psql hashes it on the client, so it
-- appears neither in the server log nor in the shell history),
-- and give it to the relay without writing it into relay.yaml:
--   source.conninfo: "host=db.internal dbname=app user=outbox_relay password=${file:/run/secrets/pg-password}"

DO $outbox_relay$
BEGIN
  EXECUTE format('GRANT CONNECT ON DATABASE %I TO outbox_relay', current_database());
END
$outbox_relay$;
GRANT USAGE ON SCHEMA public TO outbox_relay;
GRANT SELECT ON public.outbox TO outbox_relay;

-- pg_hba.conf: a logical replication connection is matched on the DATABASE NAME, not on the `replication`
-- keyword (that one is for physical replication). For example:
--
--   # TYPE   DATABASE  USER          ADDRESS       METHOD
--   hostssl  app       outbox_relay  10.0.0.0/8    scram-sha-256
--
-- Server settings the relay needs (postgresql.conf; wal_level needs a restart):
--   wal_level = logical
--   max_replication_slots = 10        # at least one per slot, plus your physical standbys' slots
--   max_wal_senders = 10              # at least one per relay (a standby relay keeps reconnecting too)
--   max_slot_wal_keep_size = 50GB     # cap on the WAL a stalled slot may hold (README, "Operating")
-- `outbox-relay check` verifies wal_level and that this role may replicate.
