-- Policy what-if (docs/policies.md "What-if"): every decision keeps what the engine saw beyond the
-- intent and the policy, so a replay of a draft policy over the policy's history never guesses:
-- the budget window's sums, the approved calls of the last hour, rule 7's vendor score, the
-- provider's last approved call, the owner approval handed over and the policy's status, as JSON
-- (core/whatif/history.ts inputsToJson; the clock is evaluated_at). Decisions stored before this
-- migration keep NULL; the replay rebuilds their inputs from their trace and says so.
ALTER TABLE intent.decisions ADD COLUMN inputs jsonb CHECK (inputs IS NULL OR jsonb_typeof(inputs) = 'object');

-- preflight_record takes the inputs as one more argument (last, defaulting to NULL, so a call
-- written for 0003's signature still means the same); preflight_records passes each item's.
DROP FUNCTION intent.preflight_record(text, text, integer, text, text, text, text, jsonb, jsonb, text, timestamptz, text,
  boolean, text, numeric, jsonb, text, text, date, timestamptz, text, text, text, text, text, text, text, text, text, bytea, bytea);

CREATE FUNCTION intent.preflight_record(
  p_intent_hash text, p_policy_id text, p_policy_version integer, p_policy_hash text,
  p_decision text, p_outcome text, p_deciding_rule text, p_rule_trace jsonb, p_engine jsonb, p_fail_closed_reason text,
  p_now timestamptz, p_receipt_id text,
  p_store_intent boolean, p_agent_id text, p_amount numeric, p_canonical jsonb,
  p_reservation_id text, p_asset text, p_day date, p_reservation_expires_at timestamptz,
  p_provider text, p_capability text, p_recipient text, p_item_hash text, p_endpoint text,
  p_use_approval text,
  p_escalation_poll_ref text, p_escalation_rule text, p_escalation_reason text, p_code_sha256 bytea, p_sealed_code bytea,
  p_inputs jsonb DEFAULT NULL)
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
                                rule_trace, engine, fail_closed_reason, evaluated_at, inputs)
  VALUES (p_intent_hash, p_policy_id, p_policy_version, p_policy_hash, p_decision, p_outcome, p_deciding_rule,
          p_rule_trace, p_engine, p_fail_closed_reason, p_now, p_inputs)
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

CREATE OR REPLACE FUNCTION intent.preflight_records(p_items jsonb)
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
               decode(v_item.v ->> 'codeSha256', 'hex'), decode(v_item.v ->> 'sealedCode', 'hex'),
               nullif(v_item.v -> 'inputs', 'null'::jsonb)) r;
  END LOOP;
END
$$;

REVOKE ALL ON FUNCTION intent.preflight_record(text, text, integer, text, text, text, text, jsonb, jsonb, text, timestamptz, text,
  boolean, text, numeric, jsonb, text, text, date, timestamptz, text, text, text, text, text, text, text, text, text, bytea, bytea, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION intent.preflight_record(text, text, integer, text, text, text, text, jsonb, jsonb, text, timestamptz, text,
  boolean, text, numeric, jsonb, text, text, date, timestamptz, text, text, text, text, text, text, text, text, text, bytea, bytea, jsonb) TO spend_control_service;
