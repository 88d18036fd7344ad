-- One index per reservation question again (migration 0006, docs/engine.md "No index to pick
-- wrongly"). The repeat probe of intent.preflight_window (migration 0011) asks for the ACTIVE
-- reservation of an intent: reservations_one_active_per_intent (intent_hash) WHERE ACTIVE answers
-- it with one row at most. But reservations_active_deadline (policy_id, day, expires_at) has the
-- same predicate, so it could answer it too, reading the policy's ACTIVE reservations (or, without
-- the policy, all of them) and filtering on intent_hash. The plan PL/pgSQL caches is made while
-- the tables are small, where both cost the same, and kept as they grow: in the bench ("intent
-- subgraph", 1 policy) every decision read the hot policy's 3,243 ACTIVE reservations (171
-- buffers, 0.5 ms) for a repeat that was not there, more with each approval of the day.
--
-- reservations_active_deadline now also requires expires_at IS NOT NULL. The column is NOT NULL,
-- so the index holds the same rows; but a statement may use it only if it implies that term, which
-- every deadline comparison does (expires_at <= now: the lapsed reads of intent.preflight_window,
-- intent.rolling_sums, intent.window_sums and the expiry sweep) and the repeat probe, which no
-- longer compares the deadline in SQL, does not. Nothing else changes: the probe answers the same
-- row (one ACTIVE reservation per intent at most, so checking its deadline afterwards is the same
-- filter); same arguments, owner, privileges and SECURITY DEFINER (CREATE OR REPLACE keeps them).

DROP INDEX intent.reservations_active_deadline;
CREATE INDEX reservations_active_deadline ON intent.reservations (policy_id, day, expires_at)
  WHERE state = 'ACTIVE' AND expires_at IS NOT NULL;

CREATE OR REPLACE FUNCTION intent.preflight_window(
  p_policy_id text, p_intent_hash text, p_now timestamptz, p_day date, p_provider text,
  p_known_version integer, p_known_hash text)
RETURNS TABLE (
  policy_found boolean, version integer, status text, policy_hash text, rules jsonb, expires_at timestamptz,
  settled text, reserved text, calls bigint, provider_last_at timestamptz, recent json, approval text,
  valid_until timestamptz, replay json)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  v_policy record;
  v_window_minutes integer := 0;
  v_cooldown_minutes integer := 0;
  v_rolling boolean := false;
  v_active numeric := 0;
  v_consumed numeric := 0;
  v_lapsed numeric := 0;
  v_rolling_sums record;
  v_boundary timestamptz := intent.call_minute(p_now - interval '1 hour');
  v_edge_calls bigint;
  v_first_call timestamptz;
  v_first_minute timestamptz;
  v_replay_ends timestamptz;
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
    v_rolling := coalesce(v_policy.rules ->> 'budgetWindow' = 'ROLLING_24H', false);
    approval := policy.escalation_approval(p_intent_hash);
  END IF;
  valid_until := to_timestamp(floor(extract(epoch FROM p_now)) + 1);

  IF v_rolling THEN
    SELECT s.settled, s.reserved, s.changes_at INTO v_rolling_sums FROM intent.rolling_sums(p_policy_id, p_day, p_now) s;
    settled := v_rolling_sums.settled::text;
    reserved := v_rolling_sums.reserved::text;
    valid_until := least(valid_until, v_rolling_sums.changes_at);
  ELSE
    SELECT t.active, t.consumed INTO v_active, v_consumed
      FROM intent.policy_day_totals t
     WHERE t.policy_id = p_policy_id AND t.day = p_day;
    SELECT coalesce(sum(r.amount), 0) INTO v_lapsed
      FROM intent.reservations r
     WHERE r.policy_id = p_policy_id AND r.day = p_day AND r.state = 'ACTIVE' AND r.expires_at <= p_now;
    settled := coalesce(v_consumed, 0)::text;
    reserved := (coalesce(v_active, 0) - v_lapsed)::text;
  END IF;

  SELECT coalesce(sum(m.calls), 0), min(m.minute) FILTER (WHERE m.calls > 0) INTO calls, v_first_minute
    FROM intent.policy_call_minutes m
   WHERE m.policy_id = p_policy_id AND m.minute > v_boundary;
  SELECT count(*), min(a.approved_at) INTO v_edge_calls, v_first_call
    FROM intent.approved_calls a
   WHERE a.policy_id = p_policy_id
     AND a.approved_at > p_now - interval '1 hour'
     AND a.approved_at < v_boundary + interval '1 minute';
  calls := calls + v_edge_calls;
  -- The first call counted leaves the hour an hour after its approval (its minute bounds it).
  valid_until := least(valid_until, coalesce(v_first_call, v_first_minute) + interval '1 hour');

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

  -- One index probe (reservations_one_active_per_intent, the only index this statement can use);
  -- a row only for a repeat, whose deadline is checked here rather than in the statement.
  SELECT json_build_object(
           'decision', d.decision, 'policyHash', d.policy_hash, 'policyVersion', d.policy_version,
           'evaluatedAtMs', floor(extract(epoch FROM d.evaluated_at) * 1000)::bigint,
           'engine', d.engine, 'ruleTrace', d.rule_trace, 'receiptId', c.receipt_id,
           'reservationId', r.reservation_id, 'amount', r.amount::text, 'asset', r.asset,
           'day', to_char(r.day, 'YYYY-MM-DD'), 'expiresAtMs', floor(extract(epoch FROM r.expires_at) * 1000)::bigint),
         r.expires_at
    INTO replay, v_replay_ends
    FROM intent.reservations r
    JOIN intent.decisions d ON d.decision_id = r.decision_id
    JOIN intent.decision_receipts c ON c.decision_id = r.decision_id
   WHERE r.intent_hash = p_intent_hash AND r.state = 'ACTIVE' AND r.policy_id = p_policy_id;
  IF v_replay_ends <= p_now THEN
    replay := NULL;
    v_replay_ends := NULL;
  END IF;
  valid_until := least(valid_until, v_replay_ends);
  RETURN NEXT;
END
$$;
