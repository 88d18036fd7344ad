-- Rate-limit token buckets, shared by every gateway replica (docs/operations.md#rate-limits).
-- One row per bucket (`ip:<address>`, `payer:<address>`, …): its level in scaled units (one token
-- = 60000, so a bucket refills `refill` units per millisecond and the maths stays in integers) at
-- a time on the database clock. The maths is gateway/rateLimit/bucket.ts, statement for statement.
-- UNLOGGED: written on every request, so no WAL; a crash empties the table, which only refills
-- every bucket (the table is also not copied to standbys, which never serve the gateway).
CREATE SCHEMA IF NOT EXISTS gateway;

CREATE UNLOGGED TABLE gateway.rate_buckets (
  bucket   text   PRIMARY KEY,
  level    bigint NOT NULL,
  at_ms    bigint NOT NULL,
  -- The limits last charged against, so the sweep can tell a full bucket without the config.
  capacity bigint NOT NULL,
  refill   bigint NOT NULL,
  CONSTRAINT rate_buckets_bucket_length CHECK (char_length(bucket) BETWEEN 1 AND 200),
  CONSTRAINT rate_buckets_limits CHECK (capacity > 0 AND refill > 0),
  CONSTRAINT rate_buckets_level CHECK (level >= 0 AND level <= capacity)
);

-- The level of a stored bucket at p_now_ms: refilled since at_ms, at most capacity, never
-- refilled backwards in time (elapsed is capped at the time a refill from empty takes, so exact).
CREATE FUNCTION gateway.bucket_level(p_level bigint, p_at_ms bigint, p_capacity bigint, p_refill bigint, p_now_ms bigint)
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
  SELECT least(p_capacity, p_level + least(greatest(p_now_ms - p_at_ms, 0), (p_capacity + p_refill - 1) / p_refill) * p_refill)
$$;

-- One check, one round trip: p_count requests charged to the same buckets at one instant, taken
-- in order, each one token from every bucket while every bucket holds one (a gateway sends the
-- checks that arrive together for the same buckets as one call). Returns how many were admitted
-- (the first ones) and, when not all, the milliseconds the first refused one would wait. Missing
-- buckets start full. Rows are locked in bucket order, so concurrent calls that share buckets
-- queue and never deadlock. p_now_ms is for tests; the gateway passes NULL and every replica
-- reads the one database clock.
CREATE FUNCTION gateway.take_rate_tokens(p_buckets text[], p_capacities bigint[], p_refills bigint[], p_count integer DEFAULT 1, p_now_ms bigint DEFAULT NULL)
RETURNS TABLE (granted integer, wait_ms bigint)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  c_token  CONSTANT bigint := 60000;
  v_now    bigint := coalesce(p_now_ms, (extract(epoch FROM clock_timestamp()) * 1000)::bigint);
  v_count  integer := coalesce(array_length(p_buckets, 1), 0);
  v_levels bigint[];
  v_refill bigint[];
  v_grant  bigint;
  v_left   bigint;
  v_wait   bigint := 0;
  r        record;
BEGIN
  IF v_count = 0 OR v_count <> coalesce(array_length(p_capacities, 1), 0) OR v_count <> coalesce(array_length(p_refills, 1), 0)
     OR (SELECT count(DISTINCT b) FROM unnest(p_buckets) AS t(b)) <> v_count OR p_count IS NULL OR p_count < 1 THEN
    RAISE EXCEPTION 'take_rate_tokens: distinct buckets with one capacity and one refill each, and a count of at least 1' USING ERRCODE = '22023';
  END IF;
  -- A sweep may delete a (full) bucket between the insert and the lock: then insert and lock again.
  FOR attempt IN 1..3 LOOP
    INSERT INTO gateway.rate_buckets (bucket, level, at_ms, capacity, refill)
    SELECT b, c, v_now, c, f FROM unnest(p_buckets, p_capacities, p_refills) AS t(b, c, f) ORDER BY b
    ON CONFLICT (bucket) DO NOTHING;
    v_levels := ARRAY[]::bigint[];
    v_refill := ARRAY[]::bigint[];
    FOR r IN
      SELECT rb.level, rb.at_ms, t.c, t.f
        FROM unnest(p_buckets, p_capacities, p_refills) AS t(b, c, f)
        JOIN gateway.rate_buckets rb ON rb.bucket = t.b
       ORDER BY t.b
         FOR UPDATE OF rb
    LOOP
      v_levels := v_levels || gateway.bucket_level(r.level, r.at_ms, r.c, r.f, v_now);
      v_refill := v_refill || r.f;
    END LOOP;
    EXIT WHEN coalesce(array_length(v_levels, 1), 0) = v_count;
  END LOOP;
  IF coalesce(array_length(v_levels, 1), 0) <> v_count THEN
    RAISE EXCEPTION 'take_rate_tokens: buckets kept disappearing under a concurrent sweep' USING ERRCODE = '40001';
  END IF;
  v_grant := p_count;
  FOR i IN 1..v_count LOOP
    v_grant := least(v_grant, v_levels[i] / c_token);
  END LOOP;
  IF v_grant < p_count THEN
    FOR i IN 1..v_count LOOP
      v_left := v_levels[i] - v_grant * c_token;
      IF v_left < c_token THEN
        v_wait := greatest(v_wait, (c_token - v_left + v_refill[i] - 1) / v_refill[i]);
      END IF;
    END LOOP;
  END IF;
  -- Nothing admitted: nothing is written, and an untouched row refills exactly as an updated one would.
  IF v_grant > 0 THEN
    UPDATE gateway.rate_buckets rb
       SET level = gateway.bucket_level(rb.level, rb.at_ms, t.c, t.f, v_now) - v_grant * c_token,
           at_ms = greatest(rb.at_ms, v_now),
           capacity = t.c,
           refill = t.f
      FROM unnest(p_buckets, p_capacities, p_refills) AS t(b, c, f)
     WHERE rb.bucket = t.b;
  END IF;
  RETURN QUERY SELECT v_grant::integer, v_wait;
END
$$;

-- Deletes the buckets that are full again (an absent bucket is a full one); returns how many.
-- Only rows nobody holds: a check in flight keeps its bucket.
CREATE FUNCTION gateway.sweep_rate_buckets(p_now_ms bigint DEFAULT NULL)
RETURNS integer
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_now     bigint := coalesce(p_now_ms, (extract(epoch FROM clock_timestamp()) * 1000)::bigint);
  v_deleted integer;
BEGIN
  DELETE FROM gateway.rate_buckets
   WHERE bucket IN (
     SELECT bucket FROM gateway.rate_buckets
      WHERE gateway.bucket_level(level, at_ms, capacity, refill, v_now) >= capacity
        FOR UPDATE SKIP LOCKED);
  GET DIAGNOSTICS v_deleted = ROW_COUNT;
  RETURN v_deleted;
END
$$;
