-- Decisions partitioned by month (issue #32 item 5; docs/engine.md "Decisions by month"). Every
-- preflight writes a decision, so intent.decisions is the table that grows fastest with use. It is
-- now PARTITION BY RANGE (decision_id), one partition per calendar month (UTC), decisions_pYYYY_MM,
-- made by the worker three months ahead like the logs' and the ledger's months, and detachable for
-- archive by the owner.
--
-- Ids. A decision id was the next value of one sequence, so a month's ids were known only once
-- the month had passed. An id is now its month's floor plus the next value of the same sequence:
--   decision_id = ((year - 1970) * 12 + month - 1) * 2^40 + nextval(decisions_decision_id_seq)
-- with the month of the clock that wrote it (clock_timestamp(), as ledger group ids). The sequence
-- stops at 2^40 - 1 (a trillion decisions), so an id never spills into the next month and two ids
-- never meet: each is unique by its sequence value alone. Ids still grow with time (the newest
-- decision has the largest id, the order the owner's decision pages and cursors use) and stay
-- exact in a JavaScript number (below 2^53 until the year 2652). Ids made before this migration
-- (the sequence alone, below 2^40) keep their value, in the partition decisions_plegacy, which
-- holds every id below the first month's floor and is never detached by month.
--
-- References. reservations, approved_calls and decision_receipts named their decision by foreign
-- key; a key into a month would forbid ever detaching it. Each is now checked when written by a
-- trigger (<table>_decision_exists) giving the same refusal (23503, the same constraint name).
-- The lookup it makes, intent.month_decision, reads the one month an id falls in with a query
-- written for that month (intent.write_decision_lookups), so its plan is kept and holds one month:
-- a plan kept for any id would hold every month and lock them all on each use, a cost that grows
-- with history (ledger migration 0014 measured it). The anchor notices read their decision the
-- same way, and the preflight's replay probe too from migration 0026, which restates it once for
-- both its decision and its receipt.
--
-- Archive: intent.detach_decision_month_partitions detaches whole past months, oldest first, and
-- stops at the first month still in use: a decision whose reservation is ACTIVE (a repeat of its
-- intent replays it) or whose receipt is not anchored yet (anchoring reads the decision).

-- ---------------------------------------------------------------------------------------------
-- Bounds and ids.
-- ---------------------------------------------------------------------------------------------

/** The first decision id of p_at's month (UTC): the months since January 1970, times 2^40. */
CREATE FUNCTION intent.decision_id_floor(p_at timestamptz) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
  SELECT (((extract(year FROM p_at AT TIME ZONE 'UTC')::integer - 1970) * 12
           + extract(month FROM p_at AT TIME ZONE 'UTC')::integer - 1)::bigint) << 40
$$;
REVOKE ALL ON FUNCTION intent.decision_id_floor(timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION intent.decision_id_floor(timestamptz) TO spend_control_service;

/** A new decision id: this month's floor plus the next value of the decisions' sequence. */
CREATE FUNCTION intent.new_decision_id() RETURNS bigint
LANGUAGE sql VOLATILE AS $$
  SELECT intent.decision_id_floor(clock_timestamp()) + nextval('intent.decisions_decision_id_seq')
$$;
REVOKE ALL ON FUNCTION intent.new_decision_id() FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- The lookup by id, written for the months attached.
-- ---------------------------------------------------------------------------------------------

/**
 * Writes intent.month_decision(id): the decision with that id, read from the one partition the id
 * falls in by a query written for that partition, or no row. Written again whenever a month is
 * made or detached; an id outside every month is in the DEFAULT partition, as the table routes it.
 */
CREATE FUNCTION intent.write_decision_lookups() RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $gen$
DECLARE
  v_branches text := '';
  v_month record;
BEGIN
  FOR v_month IN
    SELECT c.relname,
           -- FOR VALUES FROM ('<low>') TO ('<high>'), or FROM (MINVALUE) for the legacy partition
           substring(pg_get_expr(c.relpartbound, c.oid) FROM 'FROM \(''?(-?[0-9]+|MINVALUE)''?\)') AS low,
           substring(pg_get_expr(c.relpartbound, c.oid) FROM 'TO \(''?(-?[0-9]+)''?\)') AS high
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'intent.decisions'::regclass
       AND (c.relname ~ '^decisions_p[0-9]{4}_[0-9]{2}$' OR c.relname = 'decisions_plegacy')
     ORDER BY c.relname = 'decisions_plegacy', c.relname DESC -- the newest month first: where decisions go
  LOOP
    v_branches := v_branches || format(
      E'  IF %s THEN\n'
      || E'    RETURN QUERY SELECT d.* FROM intent.%I d WHERE d.decision_id = p_decision_id;\n'
      || E'    RETURN;\n  END IF;\n',
      CASE WHEN v_month.low = 'MINVALUE' THEN format('p_decision_id < %s', v_month.high)
           ELSE format('p_decision_id >= %s AND p_decision_id < %s', v_month.low, v_month.high) END,
      v_month.relname);
  END LOOP;
  EXECUTE format($f$
CREATE OR REPLACE FUNCTION intent.month_decision(p_decision_id bigint) RETURNS SETOF intent.decisions
LANGUAGE plpgsql STABLE AS $body$
-- Written by intent.write_decision_lookups() for the months attached now (the schema dump shows this line only).
BEGIN
%s  RETURN QUERY SELECT d.* FROM intent.decisions_pdefault d WHERE d.decision_id = p_decision_id;
END
$body$
$f$, v_branches);
  EXECUTE 'REVOKE ALL ON FUNCTION intent.month_decision(bigint) FROM PUBLIC';
  EXECUTE 'GRANT EXECUTE ON FUNCTION intent.month_decision(bigint) TO spend_control_service';
END
$gen$;
REVOKE ALL ON FUNCTION intent.write_decision_lookups() FROM PUBLIC;

/** A partition of intent.decisions is reached through the table: the service may read it, never write it. */
CREATE FUNCTION intent.guard_decision_month(p_name text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  EXECUTE format('REVOKE ALL ON intent.%I FROM PUBLIC, spend_control_service', p_name);
  EXECUTE format('GRANT SELECT ON intent.%I TO spend_control_service', p_name);
END
$$;
REVOKE ALL ON FUNCTION intent.guard_decision_month(text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- The months: the worker makes the coming ones; the owner detaches past ones.
-- ---------------------------------------------------------------------------------------------

/**
 * The month partitions of intent.decisions from p_from's month through p_through's (UTC), unless
 * made; returns the tables made. A month whose decisions already sit in the DEFAULT partition is
 * left there (a month beside them would be refused).
 */
CREATE FUNCTION intent.ensure_decision_month_partitions(p_from timestamptz, p_through timestamptz)
RETURNS SETOF text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_month timestamp := date_trunc('month', p_from AT TIME ZONE 'UTC');
  v_last timestamp := date_trunc('month', p_through AT TIME ZONE 'UTC');
  v_low bigint;
  v_high bigint;
  v_name text;
  v_made boolean := false;
BEGIN
  IF p_from IS NULL OR p_through IS NULL OR v_last < v_month OR v_last > v_month + interval '120 months'
     OR v_month < timestamp '1970-02-01' THEN
    RAISE EXCEPTION 'PARTITION_RANGE_INVALID: months from % through % (at most 120, from February 1970)', p_from, p_through
      USING ERRCODE = '22023';
  END IF;
  -- Waiting behind a long transaction on the table would stall the preflights queued behind this;
  -- the worker tries again next round instead.
  PERFORM set_config('lock_timeout', '2s', true);
  PERFORM pg_advisory_xact_lock(hashtext('intent.ensure_decision_month_partitions'), 0);
  WHILE v_month <= v_last LOOP
    v_low := intent.decision_id_floor(v_month AT TIME ZONE 'UTC');
    v_high := intent.decision_id_floor((v_month + interval '1 month') AT TIME ZONE 'UTC');
    v_name := format('decisions_p%s', to_char(v_month, 'YYYY_MM'));
    IF to_regclass(format('intent.%I', v_name)) IS NULL
       AND NOT EXISTS (SELECT 1 FROM intent.decisions_pdefault d WHERE d.decision_id >= v_low AND d.decision_id < v_high) THEN
      -- Made apart and attached: ATTACH lets the table's writers go on.
      EXECUTE format('CREATE TABLE intent.%I (LIKE intent.decisions INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', v_name);
      EXECUTE format('ALTER TABLE intent.decisions ATTACH PARTITION intent.%I FOR VALUES FROM (%s) TO (%s)',
                     v_name, v_low, v_high);
      PERFORM intent.guard_decision_month(v_name);
      v_made := true;
      RETURN NEXT v_name;
    END IF;
    v_month := v_month + interval '1 month';
  END LOOP;
  IF v_made THEN
    PERFORM intent.write_decision_lookups();
  END IF;
END
$$;
REVOKE ALL ON FUNCTION intent.ensure_decision_month_partitions(timestamptz, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION intent.ensure_decision_month_partitions(timestamptz, timestamptz) TO spend_control_service;

/**
 * Detaches the month partitions of intent.decisions that end at or before p_before (never the
 * current month or a later one, nor the legacy or DEFAULT partitions), oldest first; returns their
 * names. It stops, with a notice, at the first month still in use: one holding a decision whose
 * reservation is ACTIVE (a repeat replays it) or whose receipt is not anchored (anchoring reads it).
 */
CREATE FUNCTION intent.detach_decision_month_partitions(p_before timestamptz)
RETURNS SETOF text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_cut timestamp := least(p_before AT TIME ZONE 'UTC', date_trunc('month', now() AT TIME ZONE 'UTC'));
  v_part record;
  v_low bigint;
  v_high bigint;
  v_in_use text;
  v_detached boolean := false;
BEGIN
  IF p_before IS NULL THEN
    RAISE EXCEPTION 'PARTITION_RANGE_INVALID: detach before what?' USING ERRCODE = '22023';
  END IF;
  PERFORM set_config('lock_timeout', '5s', true);
  FOR v_part IN
    SELECT c.relname, to_timestamp(substring(c.relname FROM '^decisions_p([0-9]{4}_[0-9]{2})$'), 'YYYY_MM')::timestamp AS month
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'intent.decisions'::regclass AND c.relname ~ '^decisions_p[0-9]{4}_[0-9]{2}$'
     ORDER BY 2
  LOOP
    EXIT WHEN v_part.month + interval '1 month' > v_cut;
    v_low := intent.decision_id_floor(v_part.month AT TIME ZONE 'UTC');
    v_high := intent.decision_id_floor((v_part.month + interval '1 month') AT TIME ZONE 'UTC');
    -- No lock on the two tables is needed (and taking one here, before the detach's on
    -- intent.decisions, could deadlock with a preflight, which writes decisions first): nothing
    -- makes a past month's reservation ACTIVE again, and only an anchor's recheck, minutes after
    -- anchoring, reopens a receipt, never months later.
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
    EXECUTE format('ALTER TABLE intent.decisions DETACH PARTITION intent.%I', v_part.relname);
    RETURN NEXT v_part.relname;
    v_detached := true;
  END LOOP;
  IF v_detached THEN
    PERFORM intent.write_decision_lookups();
  END IF;
END
$$;
REVOKE ALL ON FUNCTION intent.detach_decision_month_partitions(timestamptz) FROM PUBLIC, spend_control_service;

-- ---------------------------------------------------------------------------------------------
-- The conversion: the foreign keys go first, the table is set aside under another name and made
-- again partitioned with its rows and ids; the sequence goes on from where it was.
-- ---------------------------------------------------------------------------------------------

ALTER TABLE intent.reservations DROP CONSTRAINT reservations_decision_id_fkey;
ALTER TABLE intent.approved_calls DROP CONSTRAINT approved_calls_decision_id_fkey;
ALTER TABLE intent.decision_receipts DROP CONSTRAINT decision_receipts_decision_id_fkey;

ALTER TABLE intent.decisions RENAME TO decisions_unpartitioned;
ALTER TABLE intent.decisions_unpartitioned RENAME CONSTRAINT decisions_pkey TO decisions_unpartitioned_pkey;
ALTER INDEX intent.decisions_policy RENAME TO decisions_unpartitioned_policy;
ALTER INDEX intent.decisions_intent RENAME TO decisions_unpartitioned_intent;
ALTER TABLE intent.decisions_unpartitioned ALTER COLUMN decision_id DROP DEFAULT;
ALTER SEQUENCE intent.decisions_decision_id_seq OWNED BY NONE;

CREATE TABLE intent.decisions (
  decision_id        bigint        NOT NULL DEFAULT intent.new_decision_id(),
  intent_hash        text          NOT NULL,
  policy_id          text          NOT NULL,
  policy_version     integer,
  policy_hash        text,
  decision           text          NOT NULL,
  outcome            text          NOT NULL,
  deciding_rule      text,
  rule_trace         jsonb         NOT NULL,
  engine             jsonb         NOT NULL,
  fail_closed_reason text,
  evaluated_at       timestamptz   NOT NULL,
  inputs             jsonb,
  CONSTRAINT decisions_engine_check CHECK (jsonb_typeof(engine) = 'object'),
  CONSTRAINT decisions_inputs_check CHECK (inputs IS NULL OR jsonb_typeof(inputs) = 'object'),
  CONSTRAINT decisions_intent_hash_check CHECK (intent_hash ~ '^0x[0-9a-f]{64}$'),
  CONSTRAINT decisions_outcome_check CHECK (outcome IN ('APPROVED', 'BLOCKED', 'ESCALATED')),
  CONSTRAINT decisions_policy_hash_check CHECK (policy_hash ~ '^0x[0-9a-f]{64}$'),
  CONSTRAINT decisions_policy_id_check CHECK (policy_id ~ '^[0-9]{1,78}$'),
  CONSTRAINT decisions_policy_version_check CHECK (policy_version >= 1),
  CONSTRAINT decisions_rule_trace_check CHECK (jsonb_typeof(rule_trace) = 'array'),
  CONSTRAINT decisions_pkey PRIMARY KEY (decision_id)
) PARTITION BY RANGE (decision_id);
CREATE INDEX decisions_policy ON intent.decisions (policy_id, evaluated_at DESC, decision_id DESC);
CREATE INDEX decisions_intent ON intent.decisions (intent_hash);
-- Every id below the first month's floor: the ids made before this migration.
CREATE TABLE intent.decisions_plegacy PARTITION OF intent.decisions FOR VALUES FROM (MINVALUE) TO (1099511627776);
CREATE TABLE intent.decisions_pdefault PARTITION OF intent.decisions DEFAULT;
SELECT intent.guard_decision_month('decisions_plegacy'), intent.guard_decision_month('decisions_pdefault');
-- Writes the lookup even if no month is made below.
SELECT intent.write_decision_lookups();
SELECT intent.ensure_decision_month_partitions(now(), now() + interval '3 months');

INSERT INTO intent.decisions (decision_id, intent_hash, policy_id, policy_version, policy_hash, decision, outcome,
                              deciding_rule, rule_trace, engine, fail_closed_reason, evaluated_at, inputs)
  SELECT decision_id, intent_hash, policy_id, policy_version, policy_hash, decision, outcome,
         deciding_rule, rule_trace, engine, fail_closed_reason, evaluated_at, inputs
    FROM intent.decisions_unpartitioned;
DROP TABLE intent.decisions_unpartitioned;
ALTER SEQUENCE intent.decisions_decision_id_seq MAXVALUE 1099511627775 OWNED BY intent.decisions.decision_id;
-- Analyzed only where rows are: an analyzed empty partition would read as empty to the planner.
ANALYZE intent.decisions_plegacy;

REVOKE ALL ON intent.decisions FROM PUBLIC, spend_control_service;
GRANT SELECT ON intent.decisions TO spend_control_service;

-- ---------------------------------------------------------------------------------------------
-- The references, checked when written (the refusal the foreign keys gave). Decisions are never
-- deleted; a month detached for archive takes its decisions out of reach on purpose, once nothing
-- reads them any more.
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION intent.decision_exists() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.decision_id IS NOT DISTINCT FROM OLD.decision_id THEN
    RETURN NEW;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM intent.month_decision(NEW.decision_id)) THEN
    RAISE EXCEPTION 'insert or update on table "%" violates foreign key constraint "%": no decision %',
      TG_TABLE_NAME, TG_ARGV[0], NEW.decision_id
      USING ERRCODE = 'foreign_key_violation', SCHEMA = TG_TABLE_SCHEMA, TABLE = TG_TABLE_NAME,
            CONSTRAINT = TG_ARGV[0];
  END IF;
  RETURN NEW;
END
$$;
REVOKE ALL ON FUNCTION intent.decision_exists() FROM PUBLIC;
CREATE TRIGGER reservations_decision_exists BEFORE INSERT OR UPDATE OF decision_id ON intent.reservations
  FOR EACH ROW EXECUTE FUNCTION intent.decision_exists('reservations_decision_id_fkey');
CREATE TRIGGER approved_calls_decision_exists BEFORE INSERT OR UPDATE OF decision_id ON intent.approved_calls
  FOR EACH ROW EXECUTE FUNCTION intent.decision_exists('approved_calls_decision_id_fkey');
CREATE TRIGGER decision_receipts_decision_exists BEFORE INSERT OR UPDATE OF decision_id ON intent.decision_receipts
  FOR EACH ROW EXECUTE FUNCTION intent.decision_exists('decision_receipts_decision_id_fkey');

-- ---------------------------------------------------------------------------------------------
-- The anchor notices read one decision by id through intent.month_decision.
-- ---------------------------------------------------------------------------------------------

-- Migration 0018's notice as it was, a decision receipt's policy read from its decision's month.
CREATE OR REPLACE FUNCTION intent.notify_receipt_anchor(p_receipt_ids text[], p_state text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM pg_notify('receipt_anchor', json_build_object(
            'receiptId', s.receipt_id, 'policyId', s.policy_id,
            'owner', CASE WHEN s.policy_id IS NULL THEN NULL ELSE policy.policy_owner(s.policy_id) END,
            'state', p_state)::text)
     FROM (SELECT ids.receipt_id, ids.ord, COALESCE(d.policy_id, i.policy_id::text) AS policy_id
             FROM unnest(p_receipt_ids) WITH ORDINALITY AS ids(receipt_id, ord)
             LEFT JOIN intent.decision_receipts r ON r.receipt_id = ids.receipt_id
             LEFT JOIN LATERAL intent.month_decision(r.decision_id) d ON true
             LEFT JOIN intent.consumer_receipts c ON c.receipt_id = ids.receipt_id
             LEFT JOIN intent.consumer_intents i ON i.intent_id = c.intent_id
            ORDER BY ids.ord) s;
END
$$;
