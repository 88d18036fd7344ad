-- Trust scores (issue #21, docs/trust.md): the counted outcomes of each provider (vendor) and of
-- each buyer (policy and agentId) of the consumer purchase history, kept as counters beside
-- intent.consumer_intents so a score, and rule 7 inside the preflight window, is one
-- primary-key probe, never a scan of a provider's history.
--
-- intent.trust_outcome_of classifies one purchase by its final outcome (core/trust/score.ts
-- OutcomeCounts): null while it is open or when it never reached the provider (the paid request
-- never left for the merchant: no settlement.requestLeftAt, no settlement.txHash). A trigger on every update of a consumer intent moves the purchase
-- from its old bucket to its new one (at most one bucket per purchase, ever), as the owner
-- (SECURITY DEFINER): the service role reads the counters and cannot write them.

CREATE FUNCTION intent.trust_outcome_of(
  p_state text, p_service_verified jsonb, p_settlement jsonb, p_resolution jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    -- Never reached the provider: blocked, expired, cancelled, failed before the merchant leg, or
    -- signed but stopped (a crash of ours) before the paid request left for the merchant.
    WHEN p_settlement IS NULL OR NOT (p_settlement ? 'requestLeftAt' OR p_settlement ? 'txHash') THEN NULL
    -- The service's own finding against the merchant (a lie caught by RDAP, or a delivery the
    -- registry could not confirm within the retry bound): final once no longer DELIVERY_PENDING.
    WHEN p_service_verified ->> 'verified' = 'false' AND p_state <> 'DELIVERY_PENDING' THEN 'failed'
    WHEN p_service_verified ->> 'verified' = 'true' AND p_state IN ('DELIVERY_VERIFIED', 'COMPLETED')
      THEN 'verified'
    -- An ambiguous payment an admin resolved NOT_PAID from the chain (the merchant never got paid).
    WHEN p_resolution ->> 'outcome' = 'NOT_PAID' THEN 'ambiguous'
    WHEN p_state IN ('REFUND_PENDING', 'REFUNDED') THEN 'refunds'
    WHEN p_state = 'FAILED_AFTER_PAYMENT' THEN 'failed'
    ELSE NULL
  END
$$;

CREATE TABLE intent.trust_vendor_outcomes (
  provider      text        PRIMARY KEY,
  verified      integer     NOT NULL DEFAULT 0 CHECK (verified >= 0),
  failed        integer     NOT NULL DEFAULT 0 CHECK (failed >= 0),
  disputed      integer     NOT NULL DEFAULT 0 CHECK (disputed >= 0),
  refunds       integer     NOT NULL DEFAULT 0 CHECK (refunds >= 0),
  ambiguous     integer     NOT NULL DEFAULT 0 CHECK (ambiguous >= 0),
  -- When the first counted outcome was recorded (kept when a purchase later leaves its bucket).
  first_seen_at timestamptz NOT NULL
);

CREATE TABLE intent.trust_buyer_outcomes (
  policy_id     numeric(78,0) NOT NULL,
  agent_id      text          NOT NULL,
  verified      integer       NOT NULL DEFAULT 0 CHECK (verified >= 0),
  failed        integer       NOT NULL DEFAULT 0 CHECK (failed >= 0),
  disputed      integer       NOT NULL DEFAULT 0 CHECK (disputed >= 0),
  refunds       integer       NOT NULL DEFAULT 0 CHECK (refunds >= 0),
  ambiguous     integer       NOT NULL DEFAULT 0 CHECK (ambiguous >= 0),
  first_seen_at timestamptz   NOT NULL,
  PRIMARY KEY (policy_id, agent_id)
);

-- One bucket of one vendor and one buyer moved by `delta`: +1 creates the row when it is the first
-- outcome; −1 only updates (the row is there: the purchase was counted in it; an INSERT of a
-- negative count would be refused by the CHECK before ON CONFLICT could turn it into an update).
CREATE FUNCTION intent.trust_count(
  p_provider text, p_policy_id numeric, p_agent_id text, p_bucket text, p_delta integer, p_at timestamptz)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v integer := CASE WHEN p_bucket = 'verified' THEN p_delta ELSE 0 END;
  f integer := CASE WHEN p_bucket = 'failed' THEN p_delta ELSE 0 END;
  d integer := CASE WHEN p_bucket = 'disputed' THEN p_delta ELSE 0 END;
  r integer := CASE WHEN p_bucket = 'refunds' THEN p_delta ELSE 0 END;
  a integer := CASE WHEN p_bucket = 'ambiguous' THEN p_delta ELSE 0 END;
BEGIN
  IF p_delta < 0 THEN
    UPDATE intent.trust_vendor_outcomes o
       SET verified = o.verified + v, failed = o.failed + f, disputed = o.disputed + d,
           refunds = o.refunds + r, ambiguous = o.ambiguous + a
     WHERE o.provider = p_provider;
    UPDATE intent.trust_buyer_outcomes o
       SET verified = o.verified + v, failed = o.failed + f, disputed = o.disputed + d,
           refunds = o.refunds + r, ambiguous = o.ambiguous + a
     WHERE o.policy_id = p_policy_id AND o.agent_id = p_agent_id;
    RETURN;
  END IF;
  INSERT INTO intent.trust_vendor_outcomes AS o (provider, verified, failed, disputed, refunds, ambiguous, first_seen_at)
  VALUES (p_provider, v, f, d, r, a, p_at)
  ON CONFLICT (provider) DO UPDATE
    SET verified = o.verified + v, failed = o.failed + f, disputed = o.disputed + d,
        refunds = o.refunds + r, ambiguous = o.ambiguous + a,
        first_seen_at = least(o.first_seen_at, p_at);
  INSERT INTO intent.trust_buyer_outcomes AS o (policy_id, agent_id, verified, failed, disputed, refunds, ambiguous, first_seen_at)
  VALUES (p_policy_id, p_agent_id, v, f, d, r, a, p_at)
  ON CONFLICT (policy_id, agent_id) DO UPDATE
    SET verified = o.verified + v, failed = o.failed + f, disputed = o.disputed + d,
        refunds = o.refunds + r, ambiguous = o.ambiguous + a,
        first_seen_at = least(o.first_seen_at, p_at);
END
$$;

-- The buyer of a consumer purchase: the SpendIntent's agentId (consumer:<wallet>, or that before
-- the SpendIntent is bound). The old bucket is left under the old row's provider and buyer.
CREATE FUNCTION intent.count_trust_outcome() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_old text := intent.trust_outcome_of(OLD.state, OLD.service_verified, OLD.settlement, OLD.resolution);
  v_new text := intent.trust_outcome_of(NEW.state, NEW.service_verified, NEW.settlement, NEW.resolution);
BEGIN
  IF v_old IS NOT DISTINCT FROM v_new AND OLD.provider = NEW.provider
     AND OLD.spend_intent ->> 'agentId' IS NOT DISTINCT FROM NEW.spend_intent ->> 'agentId' THEN
    RETURN NULL;
  END IF;
  IF v_old IS NOT NULL THEN
    PERFORM intent.trust_count(OLD.provider, OLD.policy_id,
                               coalesce(OLD.spend_intent ->> 'agentId', 'consumer:' || OLD.wallet),
                               v_old, -1, NEW.updated_at);
  END IF;
  IF v_new IS NOT NULL THEN
    PERFORM intent.trust_count(NEW.provider, NEW.policy_id,
                               coalesce(NEW.spend_intent ->> 'agentId', 'consumer:' || NEW.wallet),
                               v_new, 1, NEW.updated_at);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER consumer_intents_trust_outcome
  AFTER UPDATE ON intent.consumer_intents
  FOR EACH ROW EXECUTE FUNCTION intent.count_trust_outcome();

-- The history already there.
INSERT INTO intent.trust_vendor_outcomes (provider, verified, failed, disputed, refunds, ambiguous, first_seen_at)
SELECT provider,
       count(*) FILTER (WHERE o = 'verified'), count(*) FILTER (WHERE o = 'failed'),
       count(*) FILTER (WHERE o = 'disputed'), count(*) FILTER (WHERE o = 'refunds'),
       count(*) FILTER (WHERE o = 'ambiguous'), min(updated_at)
  FROM (SELECT provider, updated_at, intent.trust_outcome_of(state, service_verified, settlement, resolution) AS o
          FROM intent.consumer_intents) c
 WHERE o IS NOT NULL
 GROUP BY provider;
INSERT INTO intent.trust_buyer_outcomes (policy_id, agent_id, verified, failed, disputed, refunds, ambiguous, first_seen_at)
SELECT policy_id, agent_id,
       count(*) FILTER (WHERE o = 'verified'), count(*) FILTER (WHERE o = 'failed'),
       count(*) FILTER (WHERE o = 'disputed'), count(*) FILTER (WHERE o = 'refunds'),
       count(*) FILTER (WHERE o = 'ambiguous'), min(updated_at)
  FROM (SELECT policy_id, updated_at, coalesce(spend_intent ->> 'agentId', 'consumer:' || wallet) AS agent_id,
               intent.trust_outcome_of(state, service_verified, settlement, resolution) AS o
          FROM intent.consumer_intents) c
 WHERE o IS NOT NULL
 GROUP BY policy_id, agent_id;

-- Rule 7 reads the provider's counters inside the preflight window: the return types grow, so the
-- functions are dropped and created again (migration 0013's body, one probe added at the end;
-- same owner, privileges and SECURITY DEFINER).
DROP FUNCTION intent.preflight_windows(jsonb);
DROP FUNCTION intent.preflight_window(text, text, timestamptz, date, text, integer, text);

CREATE FUNCTION intent.preflight_window(
  p_policy_id text, p_intent_hash text, p_now timestamptz, p_day date, p_provider text,
  p_known_version integer, p_known_hash text)
RETURNS TABLE (
  policy_found boolean, version integer, status text, policy_hash text, rules jsonb, expires_at timestamptz,
  settled text, reserved text, calls bigint, provider_last_at timestamptz, recent json, approval text,
  valid_until timestamptz, replay json, vendor_outcomes json)
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

  -- Rule 7's input: the provider's counted outcomes (one primary-key probe; no row, no history).
  IF policy_found THEN
    SELECT json_build_array(o.verified, o.failed, o.disputed, o.refunds, o.ambiguous,
                            floor(extract(epoch FROM o.first_seen_at) * 1000)::bigint)
      INTO vendor_outcomes
      FROM intent.trust_vendor_outcomes o
     WHERE o.provider = p_provider;
  END IF;
  RETURN NEXT;
END
$$;

CREATE FUNCTION intent.preflight_windows(p_items jsonb)
RETURNS TABLE (
  item integer, policy_found boolean, version integer, status text, policy_hash text, rules jsonb, expires_at timestamptz,
  settled text, reserved text, calls bigint, provider_last_at timestamptz, recent json, approval text,
  valid_until timestamptz, replay json, vendor_outcomes json)
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
             w.settled, w.reserved, w.calls, w.provider_last_at, w.recent, w.approval, w.valid_until, w.replay,
             w.vendor_outcomes
        FROM intent.preflight_window(
               v_item.v ->> 'policyId', v_item.v ->> 'intentHash', (v_item.v ->> 'now')::timestamptz,
               (v_item.v ->> 'day')::date, v_item.v ->> 'provider', (v_item.v ->> 'knownVersion')::integer,
               v_item.v ->> 'knownHash') w;
  END LOOP;
END
$$;

REVOKE ALL ON FUNCTION intent.preflight_window(text, text, timestamptz, date, text, integer, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION intent.preflight_windows(jsonb) FROM PUBLIC;
REVOKE ALL ON FUNCTION intent.trust_count(text, numeric, text, text, integer, timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION intent.count_trust_outcome() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION intent.preflight_window(text, text, timestamptz, date, text, integer, text),
                          intent.preflight_windows(jsonb), intent.trust_outcome_of(text, jsonb, jsonb, jsonb)
  TO spend_control_service;
GRANT SELECT ON intent.trust_vendor_outcomes, intent.trust_buyer_outcomes TO spend_control_service;
