-- The benchmark's publication and load generators (bench/bench.py runs this in each benchmark database, after
-- sql/outbox_table.sql, the table `outbox-relay init --create-table` makes); the publication publishes inserts only.
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = 'bench_pub') THEN
    CREATE PUBLICATION bench_pub FOR TABLE public.outbox WITH (publish = 'insert');
  END IF;
END $$;

-- One event: about 300 bytes of JSON as PostgreSQL prints the jsonb. `ts_us` is clock_timestamp() in
-- microseconds since the epoch, taken at the insert (the latency run commits right after it).
CREATE OR REPLACE FUNCTION bench_event(g bigint, ts timestamptz) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jsonb_build_object(
    'orderId', 'order-' || (g % 20000),
    'seq', g,
    'customer', jsonb_build_object('id', 'cust-' || (g % 5000), 'name', 'Customer ' || (g % 5000),
                                   'email', 'customer' || (g % 5000) || '@example.com', 'tier', 'gold'),
    'items', jsonb_build_array(
      jsonb_build_object('sku', 'SKU-' || lpad((g % 997)::text, 6, '0'), 'qty', 1 + g % 3, 'price', 19.99),
      jsonb_build_object('sku', 'SKU-' || lpad((g % 991)::text, 6, '0'), 'qty', 2, 'price', 5.25)),
    'total', 51.49,
    'currency', 'EUR',
    'ts_us', (extract(epoch FROM ts) * 1000000)::bigint)
$$;

CREATE OR REPLACE FUNCTION bench_type(g bigint) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT (ARRAY['OrderCreated', 'OrderPaid', 'OrderShipped', 'OrderDelivered'])[1 + (g % 4)::int]
$$;

-- n events, per_tx events per transaction (the last one may be smaller).
CREATE OR REPLACE PROCEDURE bench_load(n bigint, per_tx int) LANGUAGE plpgsql AS $$
DECLARE
  done bigint := 0;
  k int;
BEGIN
  WHILE done < n LOOP
    k := least(per_tx, n - done);
    INSERT INTO public.outbox (id, aggregatetype, aggregateid, type, payload, created_at)
      SELECT gen_random_uuid(), 'order', 'order-' || (g % 20000), bench_type(g), bench_event(g, clock_timestamp()),
             clock_timestamp()
      FROM generate_series(done + 1, done + k) g;
    COMMIT;
    done := done + k;
  END LOOP;
END $$;

-- A steady rate: one event per transaction, `rate` transactions per second for `seconds` seconds, committed
-- right after the insert (created_at and the payload's ts_us are clock_timestamp() at the insert).
CREATE OR REPLACE PROCEDURE bench_steady(rate int, seconds int) LANGUAGE plpgsql AS $$
DECLARE
  t0 timestamptz := clock_timestamp();
  n bigint := rate::bigint * seconds;
  g bigint := 0;
  ahead float8;
BEGIN
  WHILE g < n LOOP
    g := g + 1;
    INSERT INTO public.outbox (id, aggregatetype, aggregateid, type, payload, created_at)
      VALUES (gen_random_uuid(), 'order', 'order-' || (g % 20000), bench_type(g), bench_event(g, clock_timestamp()),
              clock_timestamp());
    COMMIT;
    ahead := extract(epoch FROM (t0 + make_interval(secs => g::float8 / rate)) - clock_timestamp());
    IF ahead > 0.001 THEN
      PERFORM pg_sleep(ahead);
    END IF;
  END LOOP;
END $$;
