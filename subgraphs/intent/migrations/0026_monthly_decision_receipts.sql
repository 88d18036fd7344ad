-- Decision receipts partitioned by month with their decisions (issue #32 item 5; docs/engine.md
-- "Decisions by month"). Every preflight writes one receipt with its decision, so
-- intent.decision_receipts grows as fast as intent.decisions. It is now PARTITION BY RANGE
-- (decision_id) with the same months, in pairs: decision_receipts_pYYYY_MM beside decisions_pYYYY_MM,
-- decision_receipts_plegacy beside decisions_plegacy, a DEFAULT partition. A receipt and its
-- decision are always in the same month, made together by the worker and detached together.
--
-- Keys. One receipt per decision: the primary key is now decision_id (it was UNIQUE). A receipt id
-- (random, 256 bits) names the receipt everywhere else (anchoring, proofs, notices), so it stays
-- unique across months: a partitioned table's unique keys must hold its partition key, so the
-- receipt ids are claimed in the narrow intent.receipt_keys (receipt id → decision id), which the
-- receipt's insert writes (a second receipt with an id already taken: 23505 receipt_keys_pkey). A
-- receipt keeps its id and decision. Lookups by receipt id read each month's index
-- (decision_receipts_receipt); they are the anchoring's, once per batch, not the preflight's.
--
-- The preflight's replay probe reads a repeat's receipt from its month, as it reads its decision
-- (intent.month_decision_receipt, written with intent.month_decision).

-- ---------------------------------------------------------------------------------------------
-- The lookups by decision id, written for the months attached: now both tables'.
-- ---------------------------------------------------------------------------------------------

/**
 * Writes intent.month_decision(id) and intent.month_decision_receipt(id): the decision, and its
 * receipt, with that decision id, each read from the one partition the id falls in by a query
 * written for that partition, or no row. Written again whenever a month is made or detached; an
 * id outside every month is in the DEFAULT partitions, as the tables route it.
 */
CREATE OR REPLACE FUNCTION intent.write_decision_lookups() RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $gen$
DECLARE
  v_table text;
  v_function text;
  v_branches text;
  v_month record;
BEGIN
  FOREACH v_table IN ARRAY ARRAY['decisions', 'decision_receipts'] LOOP
    v_branches := '';
    FOR v_month IN
      SELECT c.relname,
             -- FOR VALUES FROM ('<low>') TO ('<high>'), or FROM (MINVALUE) for the legacy partition
             substring(pg_get_expr(c.relpartbound, c.oid) FROM 'FROM \(''?(-?[0-9]+|MINVALUE)''?\)') AS low,
             substring(pg_get_expr(c.relpartbound, c.oid) FROM 'TO \(''?(-?[0-9]+)''?\)') AS high
        FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       WHERE i.inhparent = format('intent.%I', v_table)::regclass
         AND (c.relname ~ ('^' || v_table || '_p[0-9]{4}_[0-9]{2}$') OR c.relname = v_table || '_plegacy')
       ORDER BY c.relname = v_table || '_plegacy', c.relname DESC -- the newest month first: where rows go
    LOOP
      v_branches := v_branches || format(
        E'  IF %s THEN\n'
        || E'    RETURN QUERY SELECT d.* FROM intent.%I d WHERE d.decision_id = p_decision_id;\n'
        || E'    RETURN;\n  END IF;\n',
        CASE WHEN v_month.low = 'MINVALUE' THEN format('p_decision_id < %s', v_month.high)
             ELSE format('p_decision_id >= %s AND p_decision_id < %s', v_month.low, v_month.high) END,
        v_month.relname);
    END LOOP;
    v_function := CASE v_table WHEN 'decisions' THEN 'month_decision' ELSE 'month_decision_receipt' END;
    EXECUTE format($f$
CREATE OR REPLACE FUNCTION intent.%I(p_decision_id bigint) RETURNS SETOF intent.%I
LANGUAGE plpgsql STABLE AS $body$
-- Written by intent.write_decision_lookups() for the months attached now (the schema dump shows this line only).
BEGIN
%s  RETURN QUERY SELECT d.* FROM intent.%I d WHERE d.decision_id = p_decision_id;
END
$body$
$f$, v_function, v_table, v_branches, v_table || '_pdefault');
    EXECUTE format('REVOKE ALL ON FUNCTION intent.%I(bigint) FROM PUBLIC', v_function);
    EXECUTE format('GRANT EXECUTE ON FUNCTION intent.%I(bigint) TO spend_control_service', v_function);
  END LOOP;
END
$gen$;

-- ---------------------------------------------------------------------------------------------
-- The months, in pairs: a month of decisions with its month of receipts.
-- ---------------------------------------------------------------------------------------------

/**
 * The month partitions of intent.decisions and intent.decision_receipts from p_from's month
 * through p_through's (UTC), unless made; returns the tables made. A month whose rows already sit
 * in a DEFAULT partition is left there (a month beside them would be refused).
 */
CREATE OR REPLACE FUNCTION intent.ensure_decision_month_partitions(p_from timestamptz, p_through timestamptz)
RETURNS SETOF text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_month timestamp := date_trunc('month', p_from AT TIME ZONE 'UTC');
  v_last timestamp := date_trunc('month', p_through AT TIME ZONE 'UTC');
  v_low bigint;
  v_high bigint;
  v_table text;
  v_name text;
  v_default_holds boolean;
  v_made boolean := false;
BEGIN
  IF p_from IS NULL OR p_through IS NULL OR v_last < v_month OR v_last > v_month + interval '120 months'
     OR v_month < timestamp '1970-02-01' THEN
    RAISE EXCEPTION 'PARTITION_RANGE_INVALID: months from % through % (at most 120, from February 1970)', p_from, p_through
      USING ERRCODE = '22023';
  END IF;
  -- Waiting behind a long transaction on the tables would stall the preflights queued behind
  -- this; the worker tries again next round instead.
  PERFORM set_config('lock_timeout', '2s', true);
  PERFORM pg_advisory_xact_lock(hashtext('intent.ensure_decision_month_partitions'), 0);
  WHILE v_month <= v_last LOOP
    v_low := intent.decision_id_floor(v_month AT TIME ZONE 'UTC');
    v_high := intent.decision_id_floor((v_month + interval '1 month') AT TIME ZONE 'UTC');
    FOREACH v_table IN ARRAY ARRAY['decisions', 'decision_receipts'] LOOP
      v_name := format('%s_p%s', v_table, to_char(v_month, 'YYYY_MM'));
      IF to_regclass(format('intent.%I', v_name)) IS NULL THEN
        EXECUTE format('SELECT EXISTS (SELECT 1 FROM intent.%I d WHERE d.decision_id >= $1 AND d.decision_id < $2)',
                       v_table || '_pdefault')
          INTO v_default_holds USING v_low, v_high;
        IF NOT v_default_holds THEN
          -- Made apart and attached: ATTACH lets the table's writers go on.
          EXECUTE format('CREATE TABLE intent.%I (LIKE intent.%I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)',
                         v_name, v_table);
          EXECUTE format('ALTER TABLE intent.%I ATTACH PARTITION intent.%I FOR VALUES FROM (%s) TO (%s)',
                         v_table, v_name, v_low, v_high);
          PERFORM intent.guard_decision_month(v_name);
          v_made := true;
          RETURN NEXT v_name;
        END IF;
      END IF;
    END LOOP;
    v_month := v_month + interval '1 month';
  END LOOP;
  IF v_made THEN
    PERFORM intent.write_decision_lookups();
  END IF;
END
$$;

/**
 * Detaches the month partitions of intent.decisions, each with its month of receipts, that end at
 * or before p_before (never the current month or a later one, nor the legacy or DEFAULT
 * partitions), oldest first; returns their names. It stops, with a notice, at the first month
 * still in use: one holding a decision whose reservation is ACTIVE (a repeat replays it) or whose
 * receipt is not anchored (anchoring reads both).
 */
CREATE OR REPLACE FUNCTION intent.detach_decision_month_partitions(p_before timestamptz)
RETURNS SETOF text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_cut timestamp := least(p_before AT TIME ZONE 'UTC', date_trunc('month', now() AT TIME ZONE 'UTC'));
  v_part record;
  v_low bigint;
  v_high bigint;
  v_receipts text;
  v_in_use text;
  v_detached boolean := false;
BEGIN
  IF p_before IS NULL THEN
    RAISE EXCEPTION 'PARTITION_RANGE_INVALID: detach before what?' USING ERRCODE = '22023';
  END IF;
  PERFORM set_config('lock_timeout', '5s', true);
  FOR v_part IN
    SELECT c.relname, substring(c.relname FROM '^decisions_p([0-9]{4}_[0-9]{2})$') AS suffix,
           to_timestamp(substring(c.relname FROM '^decisions_p([0-9]{4}_[0-9]{2})$'), 'YYYY_MM')::timestamp AS month
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'intent.decisions'::regclass AND c.relname ~ '^decisions_p[0-9]{4}_[0-9]{2}$'
     ORDER BY 3
  LOOP
    EXIT WHEN v_part.month + interval '1 month' > v_cut;
    v_low := intent.decision_id_floor(v_part.month AT TIME ZONE 'UTC');
    v_high := intent.decision_id_floor((v_part.month + interval '1 month') AT TIME ZONE 'UTC');
    -- No lock on the reservations or receipts is needed (and taking one here, before the
    -- detach's on the partitioned tables, could deadlock with a preflight, which writes decisions
    -- first): nothing makes a past month's reservation ACTIVE again, and only an anchor's
    -- recheck, minutes after anchoring, reopens a receipt, never months later.
    SELECT CASE
             WHEN EXISTS (SELECT 1 FROM intent.reservations r
                           WHERE r.decision_id >= v_low AND r.decision_id < v_high AND r.state = 'ACTIVE')
               THEN 'an ACTIVE reservation'
             WHEN EXISTS (SELECT 1 FROM intent.decision_receipts c
                           WHERE c.decision_id >= v_low AND c.decision_id < v_high AND c.state <> 'ANCHORED')
               THEN 'a receipt not anchored yet'
           END
      INTO v_in_use;
    IF v_in_use IS NOT NULL THEN
      RAISE NOTICE 'DECISION_MONTH_IN_USE: % holds a decision with %; it and later months stay', v_part.relname, v_in_use;
      EXIT;
    END IF;
    v_receipts := 'decision_receipts_p' || v_part.suffix;
    IF to_regclass(format('intent.%I', v_receipts)) IS NOT NULL THEN
      EXECUTE format('ALTER TABLE intent.decision_receipts DETACH PARTITION intent.%I', v_receipts);
      RETURN NEXT v_receipts;
    END IF;
    EXECUTE format('ALTER TABLE intent.decisions DETACH PARTITION intent.%I', v_part.relname);
    RETURN NEXT v_part.relname;
    v_detached := true;
  END LOOP;
  IF v_detached THEN
    PERFORM intent.write_decision_lookups();
  END IF;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- The conversion: the receipts are set aside under another name and made again partitioned, in
-- the decisions' months, with their rows; their ids are claimed in intent.receipt_keys.
-- ---------------------------------------------------------------------------------------------

CREATE TABLE intent.receipt_keys (
  receipt_id  text   PRIMARY KEY,
  decision_id bigint NOT NULL
);
REVOKE ALL ON intent.receipt_keys FROM PUBLIC, spend_control_service;
GRANT SELECT ON intent.receipt_keys TO spend_control_service;

DROP TRIGGER decision_receipts_decision_exists ON intent.decision_receipts;
ALTER TABLE intent.decision_receipts RENAME TO decision_receipts_unpartitioned;
ALTER TABLE intent.decision_receipts_unpartitioned RENAME CONSTRAINT decision_receipts_pkey TO decision_receipts_unpartitioned_pkey;
ALTER TABLE intent.decision_receipts_unpartitioned RENAME CONSTRAINT decision_receipts_decision_id_key TO decision_receipts_unpartitioned_decision_id_key;
ALTER INDEX intent.decision_receipts_unanchored RENAME TO decision_receipts_unpartitioned_unanchored;

CREATE TABLE intent.decision_receipts (
  receipt_id   text          NOT NULL,
  decision_id  bigint        NOT NULL,
  intent_hash  text          NOT NULL,
  state        text          NOT NULL DEFAULT 'PENDING',
  created_at   timestamptz   NOT NULL,
  CONSTRAINT decision_receipts_receipt_id_check CHECK (receipt_id ~ '^0x[0-9a-f]{64}$'),
  CONSTRAINT decision_receipts_state_check CHECK (state IN ('PENDING', 'ANCHORED', 'ANCHOR_FAILED')),
  CONSTRAINT decision_receipts_pkey PRIMARY KEY (decision_id)
) PARTITION BY RANGE (decision_id);
CREATE INDEX decision_receipts_unanchored ON intent.decision_receipts (created_at, decision_id) WHERE state = 'PENDING';
-- The anchoring's lookups by receipt id, in each month.
CREATE INDEX decision_receipts_receipt ON intent.decision_receipts (receipt_id);
CREATE TABLE intent.decision_receipts_plegacy PARTITION OF intent.decision_receipts FOR VALUES FROM (MINVALUE) TO (1099511627776);
CREATE TABLE intent.decision_receipts_pdefault PARTITION OF intent.decision_receipts DEFAULT;
SELECT intent.guard_decision_month('decision_receipts_plegacy'), intent.guard_decision_month('decision_receipts_pdefault');
-- A month of receipts beside every month of decisions made so far.
SELECT intent.ensure_decision_month_partitions(
         coalesce((SELECT min(to_timestamp(substring(c.relname FROM '[0-9]{4}_[0-9]{2}$'), 'YYYY_MM'))
                     FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                    WHERE i.inhparent = 'intent.decisions'::regclass AND c.relname ~ '^decisions_p[0-9]{4}_[0-9]{2}$'),
                  now()),
         now() + interval '3 months');
SELECT intent.write_decision_lookups();

/** A receipt's id is claimed when it is written, and it keeps its id and its decision. */
CREATE FUNCTION intent.claim_receipt_key() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO intent.receipt_keys (receipt_id, decision_id) VALUES (NEW.receipt_id, NEW.decision_id);
  ELSIF NEW.receipt_id IS DISTINCT FROM OLD.receipt_id OR NEW.decision_id IS DISTINCT FROM OLD.decision_id THEN
    RAISE EXCEPTION 'decision receipt % keeps its id and its decision', OLD.receipt_id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END
$$;
REVOKE ALL ON FUNCTION intent.claim_receipt_key() FROM PUBLIC;

INSERT INTO intent.decision_receipts (receipt_id, decision_id, intent_hash, state, created_at)
  SELECT receipt_id, decision_id, intent_hash, state, created_at FROM intent.decision_receipts_unpartitioned;
INSERT INTO intent.receipt_keys (receipt_id, decision_id)
  SELECT receipt_id, decision_id FROM intent.decision_receipts_unpartitioned;
DROP TABLE intent.decision_receipts_unpartitioned;
-- Analyzed only where rows are: an analyzed empty partition would read as empty to the planner.
ANALYZE intent.decision_receipts_plegacy, intent.receipt_keys;

CREATE TRIGGER decision_receipts_claim_key BEFORE INSERT OR UPDATE OF receipt_id, decision_id ON intent.decision_receipts
  FOR EACH ROW EXECUTE FUNCTION intent.claim_receipt_key();
CREATE TRIGGER decision_receipts_decision_exists BEFORE INSERT OR UPDATE OF decision_id ON intent.decision_receipts
  FOR EACH ROW EXECUTE FUNCTION intent.decision_exists('decision_receipts_decision_id_fkey');

REVOKE ALL ON intent.decision_receipts FROM PUBLIC, spend_control_service;
GRANT SELECT ON intent.decision_receipts TO spend_control_service;

-- ---------------------------------------------------------------------------------------------
-- The preflight's replay probe reads the repeat's receipt from its month too.
-- ---------------------------------------------------------------------------------------------

-- Migration 0020's preflight_window as it was, the repeat's decision and receipt read from their month.
CREATE OR REPLACE FUNCTION intent.preflight_window(
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
  -- a row only for a repeat, whose deadline is checked here rather than in the statement. Its
  -- decision and receipt are read from their month (intent.month_decision, month_decision_receipt).
  SELECT json_build_object(
           'decision', d.decision, 'policyHash', d.policy_hash, 'policyVersion', d.policy_version,
           'evaluatedAtMs', floor(extract(epoch FROM d.evaluated_at) * 1000)::bigint,
           'engine', d.engine, 'ruleTrace', d.rule_trace, 'receiptId', c.receipt_id,
           'reservationId', r.reservation_id, 'amount', r.amount::text, 'asset', r.asset,
           'day', to_char(r.day, 'YYYY-MM-DD'), 'expiresAtMs', floor(extract(epoch FROM r.expires_at) * 1000)::bigint),
         r.expires_at
    INTO replay, v_replay_ends
    FROM intent.reservations r
    CROSS JOIN LATERAL intent.month_decision(r.decision_id) d
    CROSS JOIN LATERAL intent.month_decision_receipt(r.decision_id) c
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
