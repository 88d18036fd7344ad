-- A preflight in two calls instead of a dozen statements. The decision itself stays in the pure
-- TypeScript engine; these functions only move its reads and writes into the server, so one
-- decision costs BEGIN, preflight_window, preflight_record and one durable COMMIT (docs/engine.md
-- "Performance"). The per-policy lock, the single transaction and the escalation functions of the
-- policy subgraph are exactly what the statement-by-statement path used.
--
-- Both are VOLATILE: in READ COMMITTED every statement inside takes a fresh snapshot, so the reads
-- after the lock see everything the previous holder of the lock committed.

-- Takes the per-policy decision lock (class 0x1a7e = 6782, the one settlement takes through
-- lockPolicyDecisions) and answers, in one row, what the engine needs:
--   policy_found, version, status, policy_hash, expires_at: the latest version (policy.current_policy);
--   rules: its rules, or NULL when the caller already holds the rules of this version and hash
--          (p_known_version, p_known_hash): a version's rules never change;
--   settled, reserved: CONSUMED, and ACTIVE unexpired at p_now, reservations of day p_day (decimal text);
--   calls: approved calls in the hour before p_now;
--   provider_last_at: the last approved call to p_provider, read only when the policy has a
--          same-service cooldown (rule 9 reads nothing else; with no cooldown it is NULL);
--   recent: the approved calls inside the duplicate window, newest first, at most 100 000, as a
--          JSON array of [intentHash, capability, recipient, amount (text), itemHash, provider,
--          agentId, endpoint, approvedAtMs]; NULL when the window is off or empty;
--   approval: the owner's unused approval of exactly p_intent_hash (policy.escalation_approval).
CREATE FUNCTION intent.preflight_window(
  p_policy_id text, p_intent_hash text, p_now timestamptz, p_day date, p_provider text,
  p_known_version integer, p_known_hash text)
RETURNS TABLE (
  policy_found boolean, version integer, status text, policy_hash text, rules jsonb, expires_at timestamptz,
  settled text, reserved text, calls bigint, provider_last_at timestamptz, recent json, approval text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  v_policy record;
  v_window_minutes integer := 0;
  v_cooldown_minutes integer := 0;
BEGIN
  PERFORM pg_advisory_xact_lock(6782, hashtext(p_policy_id));
  SELECT c.version, c.status, c.policy_hash, c.rules, c.expires_at INTO v_policy FROM policy.current_policy(p_policy_id) c;
  policy_found := FOUND;
  IF policy_found THEN
    version := v_policy.version;
    status := v_policy.status;
    policy_hash := v_policy.policy_hash;
    expires_at := v_policy.expires_at;
    IF v_policy.version IS DISTINCT FROM p_known_version OR v_policy.policy_hash IS DISTINCT FROM p_known_hash THEN
      rules := v_policy.rules;
    END IF;
    v_window_minutes := coalesce((v_policy.rules -> 'duplicates' ->> 'windowMinutes')::integer, 0);
    v_cooldown_minutes := coalesce((v_policy.rules -> 'cooldowns' ->> 'sameServiceMinutes')::integer, 0);
    approval := policy.escalation_approval(p_intent_hash);
  END IF;

  SELECT coalesce(sum(r.amount) FILTER (WHERE r.state = 'CONSUMED'), 0)::text,
         coalesce(sum(r.amount) FILTER (WHERE r.state = 'ACTIVE' AND r.expires_at > p_now), 0)::text
    INTO settled, reserved
    FROM intent.reservations r
   WHERE r.policy_id = p_policy_id AND r.day = p_day AND r.state IN ('CONSUMED', 'ACTIVE');

  SELECT count(*) INTO calls
    FROM intent.approved_calls a
   WHERE a.policy_id = p_policy_id AND a.approved_at > p_now - interval '1 hour';

  IF v_cooldown_minutes > 0 THEN
    SELECT a.approved_at INTO provider_last_at
      FROM intent.approved_calls a
     WHERE a.policy_id = p_policy_id AND a.provider = p_provider
     ORDER BY a.approved_at DESC
     LIMIT 1;
  END IF;

  IF v_window_minutes > 0 THEN
    SELECT json_agg(json_build_array(a.intent_hash, a.capability, a.recipient, a.amount::text, a.item_hash, a.provider,
                                     a.agent_id, a.endpoint, floor(extract(epoch FROM a.approved_at) * 1000)::bigint)
                    ORDER BY a.approved_at DESC, a.decision_id DESC)
      INTO recent
      FROM (SELECT * FROM intent.approved_calls a
             WHERE a.policy_id = p_policy_id AND a.approved_at > p_now - make_interval(mins => v_window_minutes)
             ORDER BY a.approved_at DESC, a.decision_id DESC
             LIMIT 100000) a;
  END IF;
  RETURN NEXT;
END
$$;

-- Writes one decision, in the order the statement-by-statement path did: the intent (when it came
-- in the body and its policy exists; idempotent per intentHash), the decision with its trace and
-- engine, the PENDING receipt, the owner approval it used up (policy.use_escalation_approval; if
-- this call cannot get it, it raises IN001 and the transaction cannot commit), the escalation of an
-- ESCALATED_* decision (policy.open_escalation, which queues its notices), and on APPROVED the
-- reservation and the approved-call record. Amounts are decimal text; every timestamp is the
-- caller's clock. Runs inside the caller's transaction, after preflight_window took the lock; the
-- caller may queue its COMMIT right behind this call, because any failure here aborts the
-- transaction and turns that COMMIT into a rollback.
CREATE FUNCTION intent.preflight_record(
  p_intent_hash text, p_policy_id text, p_policy_version integer, p_policy_hash text,
  p_decision text, p_outcome text, p_deciding_rule text, p_rule_trace jsonb, p_engine jsonb, p_fail_closed_reason text,
  p_now timestamptz, p_receipt_id text,
  p_store_intent boolean, p_agent_id text, p_amount numeric, p_canonical jsonb,
  p_reservation_id text, p_asset text, p_day date, p_reservation_expires_at timestamptz,
  p_provider text, p_capability text, p_recipient text, p_item_hash text, p_endpoint text,
  p_use_approval text,
  p_escalation_poll_ref text, p_escalation_rule text, p_escalation_reason text, p_code_sha256 bytea, p_sealed_code bytea)
RETURNS TABLE (decision_id bigint, escalation_poll_ref text, escalation_expires_at timestamptz)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
BEGIN
  IF p_store_intent THEN
    INSERT INTO intent.spend_intents (intent_hash, policy_id, policy_version, agent_id, amount, canonical, created_at)
    VALUES (p_intent_hash, p_policy_id::numeric, p_policy_version, p_agent_id, p_amount, p_canonical, p_now)
    ON CONFLICT (intent_hash) DO NOTHING;
  END IF;

  INSERT INTO intent.decisions (intent_hash, policy_id, policy_version, policy_hash, decision, outcome, deciding_rule,
                                rule_trace, engine, fail_closed_reason, evaluated_at)
  VALUES (p_intent_hash, p_policy_id, p_policy_version, p_policy_hash, p_decision, p_outcome, p_deciding_rule,
          p_rule_trace, p_engine, p_fail_closed_reason, p_now)
  RETURNING intent.decisions.decision_id INTO decision_id;

  INSERT INTO intent.decision_receipts (receipt_id, decision_id, intent_hash, state, created_at)
  VALUES (p_receipt_id, decision_id, p_intent_hash, 'PENDING', p_now);

  -- Read and used under the same per-policy lock: losing it means the invariant broke; refuse.
  IF p_use_approval IS NOT NULL AND NOT policy.use_escalation_approval(p_use_approval, p_now) THEN
    RAISE EXCEPTION 'owner approval % was used concurrently', p_use_approval USING ERRCODE = 'IN001';
  END IF;

  IF p_escalation_poll_ref IS NOT NULL THEN
    SELECT e.poll_ref, e.expires_at INTO escalation_poll_ref, escalation_expires_at
      FROM policy.open_escalation(p_escalation_poll_ref, p_intent_hash, p_policy_id, p_policy_version, p_decision,
                                  p_escalation_rule, p_escalation_reason, p_amount, p_recipient, p_canonical,
                                  p_code_sha256, p_sealed_code, p_now) e;
  END IF;

  IF p_reservation_id IS NOT NULL THEN
    INSERT INTO intent.reservations (reservation_id, decision_id, intent_hash, policy_id, amount, asset, day, state,
                                     expires_at, created_at, updated_at)
    VALUES (p_reservation_id, decision_id, p_intent_hash, p_policy_id, p_amount, p_asset, p_day, 'ACTIVE',
            p_reservation_expires_at, p_now, p_now);
    INSERT INTO intent.approved_calls (decision_id, policy_id, intent_hash, provider, agent_id, capability, recipient,
                                       amount, item_hash, endpoint, approved_at)
    VALUES (decision_id, p_policy_id, p_intent_hash, p_provider, p_agent_id, p_capability, p_recipient,
            p_amount, p_item_hash, p_endpoint, p_now);
  END IF;
  RETURN NEXT;
END
$$;

REVOKE ALL ON FUNCTION intent.preflight_window(text, text, timestamptz, date, text, integer, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION intent.preflight_record(text, text, integer, text, text, text, text, jsonb, jsonb, text, timestamptz, text,
  boolean, text, numeric, jsonb, text, text, date, timestamptz, text, text, text, text, text, text, text, text, text, bytea, bytea) FROM PUBLIC;
