-- Idempotency-Key of REST POSTs (docs/rest.md#idempotency-keys): one row per principal and key,
-- claimed IN_FLIGHT before the route runs and DONE with the stored answer once it answered. Kept
-- 24 hours (expires_at), then swept. A claim whose holder died is taken over once its lease lapsed.
CREATE TABLE gateway.idempotency_keys (
  principal       text        NOT NULL,
  idempotency_key text        NOT NULL,
  -- sha256 hex of the canonical {method, path, query, body}: the same key with another request is refused.
  request_digest  text        NOT NULL,
  state           text        NOT NULL,
  lease_until     timestamptz NOT NULL,
  status          integer,
  headers         jsonb,
  body            text,
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  expires_at      timestamptz NOT NULL,
  PRIMARY KEY (principal, idempotency_key),
  CONSTRAINT idempotency_keys_principal_length CHECK (char_length(principal) BETWEEN 1 AND 200),
  CONSTRAINT idempotency_keys_key_length CHECK (char_length(idempotency_key) BETWEEN 1 AND 255),
  CONSTRAINT idempotency_keys_digest CHECK (request_digest ~ '^[0-9a-f]{64}$'),
  CONSTRAINT idempotency_keys_state CHECK (state IN ('IN_FLIGHT', 'DONE')),
  CONSTRAINT idempotency_keys_answer CHECK (
    (state = 'DONE') = (status IS NOT NULL AND headers IS NOT NULL AND body IS NOT NULL)),
  CONSTRAINT idempotency_keys_status CHECK (status IS NULL OR status BETWEEN 200 AND 499),
  CONSTRAINT idempotency_keys_kept CHECK (expires_at > created_at)
);

CREATE INDEX idempotency_keys_expiry ON gateway.idempotency_keys (expires_at);

-- One round trip per request: CLAIMED (run the route), REPLAY (the stored answer), IN_FLIGHT
-- (another request holds the key: retry later) or REUSED (the key was used for another request).
-- An expired row is gone first, so an old key starts afresh.
CREATE FUNCTION gateway.claim_idempotency_key(p_principal text, p_key text, p_digest text, p_lease_ms integer, p_keep_ms bigint)
RETURNS TABLE (outcome text, status integer, headers jsonb, body text)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_now timestamptz := clock_timestamp();
  r     gateway.idempotency_keys%ROWTYPE;
BEGIN
  IF p_lease_ms IS NULL OR p_lease_ms < 1 OR p_keep_ms IS NULL OR p_keep_ms <= p_lease_ms THEN
    RAISE EXCEPTION 'claim_idempotency_key: a lease of at least 1 ms, kept longer than the lease' USING ERRCODE = '22023';
  END IF;
  DELETE FROM gateway.idempotency_keys k
   WHERE k.principal = p_principal AND k.idempotency_key = p_key AND k.expires_at <= v_now;
  INSERT INTO gateway.idempotency_keys (principal, idempotency_key, request_digest, state, lease_until, created_at, expires_at)
  VALUES (p_principal, p_key, p_digest, 'IN_FLIGHT', v_now + make_interval(secs => p_lease_ms / 1000.0), v_now,
          v_now + make_interval(secs => p_keep_ms / 1000.0))
  ON CONFLICT ON CONSTRAINT idempotency_keys_pkey DO NOTHING;
  IF FOUND THEN
    RETURN QUERY SELECT 'CLAIMED'::text, NULL::integer, NULL::jsonb, NULL::text;
    RETURN;
  END IF;
  SELECT * INTO r FROM gateway.idempotency_keys k
   WHERE k.principal = p_principal AND k.idempotency_key = p_key FOR UPDATE;
  IF r.request_digest <> p_digest THEN
    RETURN QUERY SELECT 'REUSED'::text, NULL::integer, NULL::jsonb, NULL::text;
  ELSIF r.state = 'DONE' THEN
    RETURN QUERY SELECT 'REPLAY'::text, r.status, r.headers, r.body;
  ELSIF r.lease_until > v_now THEN
    RETURN QUERY SELECT 'IN_FLIGHT'::text, NULL::integer, NULL::jsonb, NULL::text;
  ELSE
    UPDATE gateway.idempotency_keys k SET lease_until = v_now + make_interval(secs => p_lease_ms / 1000.0)
     WHERE k.principal = p_principal AND k.idempotency_key = p_key;
    RETURN QUERY SELECT 'CLAIMED'::text, NULL::integer, NULL::jsonb, NULL::text;
  END IF;
END
$$;

-- Deletes the keys past their 24 hours; returns how many.
CREATE FUNCTION gateway.sweep_idempotency_keys()
RETURNS integer
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_deleted integer;
BEGIN
  DELETE FROM gateway.idempotency_keys WHERE expires_at <= clock_timestamp();
  GET DIAGNOSTICS v_deleted = ROW_COUNT;
  RETURN v_deleted;
END
$$;
