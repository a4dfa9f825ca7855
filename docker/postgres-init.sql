-- Run once by the postgres image when it initializes its data directory (/docker-entrypoint-initdb.d), in the
-- database POSTGRES_DB (app), as the superuser. Creates the relay's least-privilege role (sql/role.sql); the
-- outbox table, the publication and the slot are created afterwards by the `relay-init` service
-- (`outbox-relay init --create-table`, as the database owner).
--
-- The password is for this local demo only. In production set it out of band and hand it to the relay with
-- ${file:...} or ${env:...}.
DO $outbox_relay$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'outbox_relay') THEN
    CREATE ROLE outbox_relay LOGIN REPLICATION NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD 'relay-demo-password';
  END IF;
END
$outbox_relay$;
GRANT CONNECT ON DATABASE app TO outbox_relay;
GRANT USAGE ON SCHEMA public TO outbox_relay;
-- The outbox table does not exist yet: grant SELECT on the tables the owner creates later (needed only for a
-- backfill, not for streaming).
ALTER DEFAULT PRIVILEGES FOR ROLE postgres IN SCHEMA public GRANT SELECT ON TABLES TO outbox_relay;
