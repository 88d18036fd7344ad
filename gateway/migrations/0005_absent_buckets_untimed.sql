-- A missing bucket carries no time (issue #32's shared rate limits; gateway/rateLimit/bucket.ts).
-- take_rate_tokens (0001) and take_rate_tokens_each (0004) wrote a missing bucket full with at_ms
-- = the call's now even when the check was refused, and a refused check must write nothing: the
-- row then stood for "full at now", where the pure maths (and the memory store) keep "absent, so
-- full". The two read the same, except that a bucket's time never goes back (at_ms only grows), and
-- the now a call takes is not always later than the last one's: concurrent calls read the clock
-- before they queue on the row lock, so a call may take a token at a now before the at_ms a
-- refused call left. Then the bucket kept the later time and lost the refill in between, and the
-- next check waited that much longer than the maths says (the property test in
-- gateway/rateLimit/store.test.ts found 60000 ms against 59999 after a refusal at t+1 and a take at
-- t). Likewise, a later check of the same call naming the bucket with larger limits read it full
-- at the first check's capacity, not its own.
--
-- Now a missing bucket is written full at time 0: full at any time and any limits, as absent is,
-- and a check that takes from it stores its own now, as the maths does. The functions are
-- otherwise unchanged; the sweep forgets such a row like any full one.

CREATE OR REPLACE FUNCTION gateway.take_rate_tokens(p_buckets text[], p_capacities bigint[], p_refills bigint[], p_count integer DEFAULT 1, p_now_ms bigint DEFAULT NULL)
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
  -- A missing bucket is written full since time 0, which reads as full at any time, as absent.
  FOR attempt IN 1..3 LOOP
    INSERT INTO gateway.rate_buckets (bucket, level, at_ms, capacity, refill)
    SELECT b, c, 0, c, f FROM unnest(p_buckets, p_capacities, p_refills) AS t(b, c, f) ORDER BY b
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

CREATE OR REPLACE FUNCTION gateway.take_rate_tokens_each(p_checks integer[], p_buckets text[], p_capacities bigint[], p_refills bigint[], p_now_ms bigint DEFAULT NULL)
RETURNS TABLE (check_no integer, granted boolean, wait_ms bigint)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  c_token   CONSTANT bigint := 60000;
  v_now     bigint := coalesce(p_now_ms, (extract(epoch FROM clock_timestamp()) * 1000)::bigint);
  v_pairs   integer := coalesce(array_length(p_buckets, 1), 0);
  v_checks  integer;
  -- The distinct buckets in bucket order, and each one's state as the checks go: its stored level
  -- and time, and the limits the last admitted check charged it with (NULL: untouched).
  v_names   text[];
  v_level   bigint[];
  v_at      bigint[];
  v_cap     bigint[];
  v_fill    bigint[];
  v_slot    integer[];   -- for each pair, its bucket's position in v_names
  v_first   integer;
  v_last    integer;
  v_ok      boolean;
  v_wait    bigint;
  v_units   bigint;
  r         record;
BEGIN
  IF v_pairs = 0 OR v_pairs <> coalesce(array_length(p_checks, 1), 0)
     OR v_pairs <> coalesce(array_length(p_capacities, 1), 0) OR v_pairs <> coalesce(array_length(p_refills, 1), 0)
     OR p_checks[1] <> 1
     -- checks numbered 1..n in order, each check's buckets together and distinct
     OR EXISTS (SELECT 1 FROM generate_subscripts(p_checks, 1) AS s(i)
                 WHERE i > 1 AND p_checks[i] NOT IN (p_checks[i - 1], p_checks[i - 1] + 1))
     OR (SELECT count(DISTINCT (c, b)) FROM unnest(p_checks, p_buckets) AS t(c, b)) <> v_pairs
     OR EXISTS (SELECT 1 FROM unnest(p_capacities, p_refills) AS t(c, f) WHERE c IS NULL OR f IS NULL OR c < 1 OR f < 1)
     OR EXISTS (SELECT 1 FROM unnest(p_buckets) AS t(b) WHERE b IS NULL) THEN
    RAISE EXCEPTION 'take_rate_tokens_each: checks numbered 1..n in order, each with distinct buckets, one capacity and one refill each' USING ERRCODE = '22023';
  END IF;
  v_checks := p_checks[v_pairs];
  v_names := ARRAY(SELECT DISTINCT b FROM unnest(p_buckets) AS t(b) ORDER BY b);
  v_slot := ARRAY(SELECT array_position(v_names, b) FROM unnest(p_buckets) WITH ORDINALITY AS t(b, i) ORDER BY i);
  -- A sweep may delete a (full) bucket between the insert and the lock: then insert and lock again.
  -- A missing bucket is written full since time 0: full at the limits of whichever check reads it.
  FOR attempt IN 1..3 LOOP
    INSERT INTO gateway.rate_buckets (bucket, level, at_ms, capacity, refill)
    SELECT DISTINCT ON (b) b, c, 0, c, f
      FROM unnest(p_buckets, p_capacities, p_refills) WITH ORDINALITY AS t(b, c, f, i)
     ORDER BY b, i
    ON CONFLICT (bucket) DO NOTHING;
    v_level := ARRAY[]::bigint[];
    v_at := ARRAY[]::bigint[];
    FOR r IN
      SELECT rb.level, rb.at_ms
        FROM unnest(v_names) WITH ORDINALITY AS t(b, i)
        JOIN gateway.rate_buckets rb ON rb.bucket = t.b
       ORDER BY t.b
         FOR UPDATE OF rb
    LOOP
      v_level := v_level || r.level;
      v_at := v_at || r.at_ms;
    END LOOP;
    EXIT WHEN coalesce(array_length(v_level, 1), 0) = array_length(v_names, 1);
  END LOOP;
  IF coalesce(array_length(v_level, 1), 0) <> array_length(v_names, 1) THEN
    RAISE EXCEPTION 'take_rate_tokens_each: buckets kept disappearing under a concurrent sweep' USING ERRCODE = '40001';
  END IF;
  v_cap := array_fill(NULL::bigint, ARRAY[array_length(v_names, 1)]);
  v_fill := array_fill(NULL::bigint, ARRAY[array_length(v_names, 1)]);
  v_first := 1;
  FOR k IN 1..v_checks LOOP
    v_last := v_first;
    WHILE v_last < v_pairs AND p_checks[v_last + 1] = k LOOP
      v_last := v_last + 1;
    END LOOP;
    -- take_rate_tokens with a count of 1: every bucket must hold a token at this check's limits.
    v_ok := true;
    v_wait := 0;
    FOR i IN v_first..v_last LOOP
      v_units := gateway.bucket_level(v_level[v_slot[i]], v_at[v_slot[i]], p_capacities[i], p_refills[i], v_now);
      IF v_units < c_token THEN
        v_ok := false;
        v_wait := greatest(v_wait, (c_token - v_units + p_refills[i] - 1) / p_refills[i]);
      END IF;
    END LOOP;
    IF v_ok THEN
      FOR i IN v_first..v_last LOOP
        v_level[v_slot[i]] := gateway.bucket_level(v_level[v_slot[i]], v_at[v_slot[i]], p_capacities[i], p_refills[i], v_now) - c_token;
        v_at[v_slot[i]] := greatest(v_at[v_slot[i]], v_now);
        v_cap[v_slot[i]] := p_capacities[i];
        v_fill[v_slot[i]] := p_refills[i];
      END LOOP;
      v_wait := 0;
    END IF;
    check_no := k;
    granted := v_ok;
    wait_ms := v_wait;
    RETURN NEXT;
    v_first := v_last + 1;
  END LOOP;
  -- Only buckets some admitted check charged are written; an untouched row refills as an updated one would.
  UPDATE gateway.rate_buckets rb
     SET level = t.level, at_ms = t.at_ms, capacity = t.cap, refill = t.fill
    FROM unnest(v_names, v_level, v_at, v_cap, v_fill) AS t(b, level, at_ms, cap, fill)
   WHERE rb.bucket = t.b AND t.cap IS NOT NULL;
END
$$;
