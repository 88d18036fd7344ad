-- The window a decision reads, with three additions (docs/engine.md "The budget window", "The
-- decision time", "A repeated preflight"):
--
-- 1. The policy's budgetWindow. UTC_DAY (absent from the rules) is unchanged: what was approved in
--    the UTC day p_day, settled (the amount it settled) or ACTIVE and unexpired. ROLLING_24H
--    (intent.rolling_sums): what settled in the 24 hours before p_now (settled_at > p_now - 24 h,
--    from the settled hours of migration 0009 plus the boundary hour's rows) and every ACTIVE
--    reservation unexpired at p_now, whatever day it was approved.
-- 2. valid_until: an instant after p_now before which nothing in the row can change while the
--    caller holds the lock. The caller reads its clock once the lock is held; when that reading
--    is not in [p_now, valid_until) it reads the window again at that reading. Deadlines (hence
--    lapses, and a replayed reservation's end) and midnight fall on whole seconds, so the next
--    whole second bounds them; an approved call leaves the hour one hour after it was approved and
--    a settlement leaves ROLLING_24H 24 hours after it settled, so the first counted one bounds
--    those (read from the statements that count them). The duplicate list is filtered again by the
--    engine at its own now, and nothing else depends on p_now.
-- 3. replay: the decision, receipt and reservation of this intent while its approval's reservation
--    is ACTIVE and unexpired; the caller answers it instead of deciding again.

-- The whole-second deadlines valid_until relies on (intent deadlines are whole unix seconds).
ALTER TABLE intent.reservations ADD CONSTRAINT reservations_expire_on_a_second
  CHECK (extract(epoch FROM expires_at) = floor(extract(epoch FROM expires_at)));

-- ROLLING_24H's sums at p_now. changes_at: when the first settlement counted leaves the 24 hours
-- (a lower bound when only its hour is known); lapses happen on whole seconds (see above).
CREATE FUNCTION intent.rolling_sums(p_policy_id text, p_day date, p_now timestamptz)
RETURNS TABLE (settled numeric, reserved numeric, changes_at timestamptz)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  v_edge_hour timestamptz := intent.settlement_hour(p_now - interval '24 hours');
  v_hours numeric;
  v_first_hour timestamptz;
  v_edge numeric;
  v_first_settled timestamptz;
BEGIN
  -- Every day that may still hold an unexpired reservation: a deadline is at most 30 days after
  -- its approval (maxDeadlineMinutes <= 43,200), so none approved before p_day - 31 is unexpired.
  SELECT coalesce(sum(t.active - l.lapsed), 0) INTO reserved
    FROM intent.policy_day_totals t
    CROSS JOIN LATERAL (SELECT coalesce(sum(r.amount), 0) AS lapsed
                          FROM intent.reservations r
                         WHERE r.policy_id = t.policy_id AND r.day = t.day AND r.state = 'ACTIVE'
                           AND r.expires_at <= p_now) l
   WHERE t.policy_id = p_policy_id AND t.day >= p_day - 31 AND t.active > 0;

  SELECT coalesce(sum(h.settled), 0), min(h.hour) FILTER (WHERE h.settled > 0) INTO v_hours, v_first_hour
    FROM intent.policy_settled_hours h
   WHERE h.policy_id = p_policy_id AND h.hour > v_edge_hour;
  SELECT coalesce(sum(r.settled_amount), 0), min(r.settled_at) INTO v_edge, v_first_settled
    FROM intent.reservations r
   WHERE r.policy_id = p_policy_id AND r.state = 'CONSUMED'
     AND r.settled_at > p_now - interval '24 hours' AND r.settled_at < v_edge_hour + interval '1 hour';
  settled := v_hours + v_edge;
  changes_at := coalesce(v_first_settled, v_first_hour) + interval '24 hours';
  RETURN NEXT;
END
$$;

-- The return type grows, so the functions are dropped and created again (callers: preflight.ts).
DROP FUNCTION intent.preflight_windows(jsonb);
DROP FUNCTION intent.preflight_window(text, text, timestamptz, date, text, integer, text);

CREATE FUNCTION intent.preflight_window(
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

  -- One index probe (reservations_one_active_per_intent); a row only for a repeat.
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
   WHERE r.intent_hash = p_intent_hash AND r.state = 'ACTIVE' AND r.policy_id = p_policy_id AND r.expires_at > p_now;
  valid_until := least(valid_until, v_replay_ends);
  RETURN NEXT;
END
$$;

-- Migration 0004's batch read, with the new columns.
CREATE FUNCTION intent.preflight_windows(p_items jsonb)
RETURNS TABLE (
  item integer, policy_found boolean, version integer, status text, policy_hash text, rules jsonb, expires_at timestamptz,
  settled text, reserved text, calls bigint, provider_last_at timestamptz, recent json, approval text,
  valid_until timestamptz, replay json)
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
             w.settled, w.reserved, w.calls, w.provider_last_at, w.recent, w.approval, w.valid_until, w.replay
        FROM intent.preflight_window(
               v_item.v ->> 'policyId', v_item.v ->> 'intentHash', (v_item.v ->> 'now')::timestamptz,
               (v_item.v ->> 'day')::date, v_item.v ->> 'provider', (v_item.v ->> 'knownVersion')::integer,
               v_item.v ->> 'knownHash') w;
  END LOOP;
END
$$;

-- The tools' sums (migration 0007) under the policy's budget window, which the caller read with
-- the policy. No lock: a read, not a decision.
DROP FUNCTION intent.window_sums(text, date, timestamptz);
CREATE FUNCTION intent.window_sums(p_policy_id text, p_day date, p_now timestamptz, p_budget_window text)
RETURNS TABLE (settled text, reserved text, calls bigint)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  v_sums record;
  v_boundary timestamptz := intent.call_minute(p_now - interval '1 hour');
BEGIN
  IF p_budget_window = 'ROLLING_24H' THEN
    SELECT s.settled, s.reserved INTO v_sums FROM intent.rolling_sums(p_policy_id, p_day, p_now) s;
  ELSE
    SELECT coalesce(t.consumed, 0) AS settled,
           coalesce(t.active, 0) - (SELECT coalesce(sum(r.amount), 0)
                                      FROM intent.reservations r
                                     WHERE r.policy_id = p_policy_id AND r.day = p_day AND r.state = 'ACTIVE'
                                       AND r.expires_at <= p_now) AS reserved
      INTO v_sums
      FROM (SELECT 1) one
      LEFT JOIN intent.policy_day_totals t ON t.policy_id = p_policy_id AND t.day = p_day;
  END IF;
  settled := v_sums.settled::text;
  reserved := v_sums.reserved::text;
  calls := (SELECT coalesce(sum(m.calls), 0) FROM intent.policy_call_minutes m
             WHERE m.policy_id = p_policy_id AND m.minute > v_boundary)::bigint
           + (SELECT count(*) FROM intent.approved_calls a
               WHERE a.policy_id = p_policy_id AND a.approved_at > p_now - interval '1 hour'
                 AND a.approved_at < v_boundary + interval '1 minute');
  RETURN NEXT;
END
$$;

REVOKE ALL ON FUNCTION intent.preflight_window(text, text, timestamptz, date, text, integer, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION intent.preflight_windows(jsonb) FROM PUBLIC;
