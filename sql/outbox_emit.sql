-- A table-less outbox (source.messages: true): emit an event as a transactional logical decoding message.
-- It commits or rolls back with the caller's transaction, costs no table row, needs no cleanup, and produces the
-- same Kafka record as a row of the outbox table would (the JSON fields are the table's column names).
--
--   SELECT outbox_emit('order', 'o-42', 'OrderCreated', '{"total": 10}');
--
-- The payload (jsonb) is written as the JSON text PostgreSQL prints for it.
CREATE OR REPLACE FUNCTION outbox_emit(p_aggregatetype text, p_aggregateid text, p_type text, p_payload jsonb,
                                       p_id uuid DEFAULT gen_random_uuid(), p_prefix text DEFAULT 'outbox')
RETURNS uuid
LANGUAGE sql VOLATILE
AS $$
  SELECT pg_logical_emit_message(
           true, p_prefix,
           json_build_object('id', p_id, 'aggregatetype', p_aggregatetype, 'aggregateid', p_aggregateid,
                             'type', p_type, 'payload', p_payload)::text);
  SELECT p_id;
$$;
