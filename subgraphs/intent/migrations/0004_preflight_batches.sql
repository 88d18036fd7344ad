-- Group commit for preflights: several decisions of different policies share one transaction, so
-- BEGIN, the window read, the write and the durable COMMIT are paid once per batch instead of once
-- per decision (docs/engine.md "Performance"). Each item is exactly one preflight_window and one
-- preflight_record call of migration 0003; nothing about a single decision changes. The caller
-- (subgraphs/intent/preflight.ts, runPreflightBatch) never puts two items of one policy in one
-- call: a policy's next preflight goes in the next round's calls, in the same transaction, and
-- reads what the previous round wrote. It retries the items one by one when a batch fails.

-- Reads the windows of a batch: p_items is a JSON array of
--   {policyId, intentHash, now (ISO timestamp), day (YYYY-MM-DD), provider, knownVersion, knownHash}
-- and each row is preflight_window's row for one item, with `item` its 0-based index. The per-policy
-- locks are taken in ascending order of the lock key (hashtext(policyId)), the order every batch
-- takes them in, so two batches can never wait for each other in a cycle; a transaction that holds
-- one policy's lock (settlement, a single preflight) never waits for a second one.
CREATE FUNCTION intent.preflight_windows(p_items jsonb)
RETURNS TABLE (
  item integer, policy_found boolean, version integer, status text, policy_hash text, rules jsonb, expires_at timestamptz,
  settled text, reserved text, calls bigint, provider_last_at timestamptz, recent json, approval text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_item record;
BEGIN
  IF jsonb_typeof(p_items) IS DISTINCT FROM 'array' THEN
    RAISE EXCEPTION 'preflight_windows takes a JSON array' USING ERRCODE = '22023';
  END IF;
  FOR v_item IN
    SELECT (e.ordinality - 1)::integer AS i, e.value AS v
      FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e
     ORDER BY hashtext(e.value ->> 'policyId'), e.value ->> 'policyId', e.ordinality
  LOOP
    RETURN QUERY
      SELECT v_item.i, w.policy_found, w.version, w.status, w.policy_hash, w.rules, w.expires_at,
             w.settled, w.reserved, w.calls, w.provider_last_at, w.recent, w.approval
        FROM intent.preflight_window(
               v_item.v ->> 'policyId', v_item.v ->> 'intentHash', (v_item.v ->> 'now')::timestamptz,
               (v_item.v ->> 'day')::date, v_item.v ->> 'provider', (v_item.v ->> 'knownVersion')::integer,
               v_item.v ->> 'knownHash') w;
  END LOOP;
END
$$;

-- Writes the decisions of a batch, in array order: each element holds preflight_record's arguments
-- by name (camelCase; amounts as decimal text, timestamps as ISO text, ruleTrace/engine/canonical
-- as JSON, codeSha256/sealedCode as hex, absent or null for NULL). One row per item. Any failure
-- aborts the caller's transaction, so a batch is written whole or not at all.
CREATE FUNCTION intent.preflight_records(p_items jsonb)
RETURNS TABLE (item integer, decision_id bigint, escalation_poll_ref text, escalation_expires_at timestamptz)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_item record;
BEGIN
  IF jsonb_typeof(p_items) IS DISTINCT FROM 'array' THEN
    RAISE EXCEPTION 'preflight_records takes a JSON array' USING ERRCODE = '22023';
  END IF;
  FOR v_item IN
    SELECT (e.ordinality - 1)::integer AS i, e.value AS v
      FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e
     ORDER BY e.ordinality
  LOOP
    RETURN QUERY
      SELECT v_item.i, r.decision_id, r.escalation_poll_ref, r.escalation_expires_at
        FROM intent.preflight_record(
               v_item.v ->> 'intentHash', v_item.v ->> 'policyId', (v_item.v ->> 'policyVersion')::integer,
               v_item.v ->> 'policyHash',
               v_item.v ->> 'decision', v_item.v ->> 'outcome', v_item.v ->> 'decidingRule',
               v_item.v -> 'ruleTrace', v_item.v -> 'engine', v_item.v ->> 'failClosedReason',
               (v_item.v ->> 'now')::timestamptz, v_item.v ->> 'receiptId',
               (v_item.v ->> 'storeIntent')::boolean, v_item.v ->> 'agentId', (v_item.v ->> 'amount')::numeric,
               nullif(v_item.v -> 'canonical', 'null'::jsonb),
               v_item.v ->> 'reservationId', v_item.v ->> 'asset', (v_item.v ->> 'day')::date,
               (v_item.v ->> 'reservationExpiresAt')::timestamptz,
               v_item.v ->> 'provider', v_item.v ->> 'capability', v_item.v ->> 'recipient', v_item.v ->> 'itemHash',
               v_item.v ->> 'endpoint',
               v_item.v ->> 'useApproval',
               v_item.v ->> 'escalationPollRef', v_item.v ->> 'escalationRule', v_item.v ->> 'escalationReason',
               decode(v_item.v ->> 'codeSha256', 'hex'), decode(v_item.v ->> 'sealedCode', 'hex')) r;
  END LOOP;
END
$$;

REVOKE ALL ON FUNCTION intent.preflight_windows(jsonb) FROM PUBLIC;
REVOKE ALL ON FUNCTION intent.preflight_records(jsonb) FROM PUBLIC;
