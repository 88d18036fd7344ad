-- Consuming a reservation, enforced here rather than trusted to settlement.ts, which posted
-- whatever it was given: no group at all, several, or 5.00 paid out against a 0.10 reservation
-- (the budget then saw 0.10 spent, the ledger 5.00 paid).
--
-- intent.consume_reservation is the one way a reservation becomes CONSUMED. Under the policy's
-- decision lock it takes an ACTIVE, unexpired reservation and exactly one ledger group, in the
-- reservation's asset, moving at most the reserved amount; posts that group with
-- ledger.post_group (the ledger's own checks, the balance at COMMIT); and records what it moved
-- (settled_amount, the sum of the group's debits) and when (settled_at). The rest of the
-- reservation is released with it: the budget counts settled_amount, never the reserved amount.
-- Anything else raises, and the transaction cannot commit:
--   IN002  the reservation is not ACTIVE and unexpired (ILLEGAL_STATE_TRANSITION), or an UPDATE
--          tried to mark it CONSUMED, or to change its settlement, without this function;
--   IN003  the settlement does not fit it (RESERVATION_SETTLEMENT_INVALID): no group, two groups,
--          another asset, more than reserved, a kind that is not a settlement, a group that
--          already settled another reservation, or no such reservation.

ALTER TABLE intent.reservations ADD COLUMN settled_amount numeric(78,0), ADD COLUMN settled_at timestamptz;

-- Reservations consumed before: the old wrapper counted all they held, settled when last updated.
UPDATE intent.reservations SET settled_amount = amount, settled_at = updated_at WHERE state = 'CONSUMED';

-- NOT VALID: a reservation the old wrapper consumed with no group (or with several) stays as it
-- was; every row written from now on is checked.
ALTER TABLE intent.reservations ADD CONSTRAINT reservations_settlement CHECK (
  CASE WHEN state = 'CONSUMED'
       THEN settled_amount IS NOT NULL AND settled_at IS NOT NULL AND settled_group_id IS NOT NULL
            AND settled_amount > 0 AND settled_amount <= amount AND settled_group_id ~ '^lg_[0-9a-f]{24}$'
       ELSE settled_amount IS NULL AND settled_at IS NULL AND settled_group_id IS NULL
  END) NOT VALID;

-- One group settles one reservation.
CREATE UNIQUE INDEX reservations_settled_group ON intent.reservations (settled_group_id) WHERE settled_group_id IS NOT NULL;

-- Migration 0008's guard, plus: ACTIVE becomes CONSUMED only inside intent.consume_reservation
-- (which names the reservation in the transaction-local setting intent.consuming for its one
-- UPDATE), and the settlement columns are written by that transition only.
CREATE OR REPLACE FUNCTION intent.guard_reservation_update() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF NEW.state IS DISTINCT FROM OLD.state AND OLD.state <> 'ACTIVE' THEN
    RAISE EXCEPTION 'reservation % is %; it cannot become %', OLD.reservation_id, OLD.state, NEW.state
      USING ERRCODE = 'IN002';
  END IF;
  IF NEW.reservation_id IS DISTINCT FROM OLD.reservation_id OR NEW.decision_id IS DISTINCT FROM OLD.decision_id
     OR NEW.intent_hash IS DISTINCT FROM OLD.intent_hash OR NEW.policy_id IS DISTINCT FROM OLD.policy_id
     OR NEW.amount IS DISTINCT FROM OLD.amount OR NEW.asset IS DISTINCT FROM OLD.asset
     OR NEW.day IS DISTINCT FROM OLD.day OR NEW.expires_at IS DISTINCT FROM OLD.expires_at
     OR NEW.created_at IS DISTINCT FROM OLD.created_at THEN
    RAISE EXCEPTION 'reservation % changes only its state, settlement and update time', OLD.reservation_id
      USING ERRCODE = 'IN002';
  END IF;
  IF NEW.state = 'CONSUMED' AND OLD.state = 'ACTIVE' THEN
    IF current_setting('intent.consuming', true) IS DISTINCT FROM NEW.reservation_id THEN
      RAISE EXCEPTION 'reservation % is consumed only by intent.consume_reservation, with its ledger group', OLD.reservation_id
        USING ERRCODE = 'IN002';
    END IF;
  ELSIF NEW.settled_amount IS DISTINCT FROM OLD.settled_amount OR NEW.settled_at IS DISTINCT FROM OLD.settled_at
        OR NEW.settled_group_id IS DISTINCT FROM OLD.settled_group_id THEN
    RAISE EXCEPTION 'reservation % records its settlement once, when it is consumed', OLD.reservation_id
      USING ERRCODE = 'IN002';
  END IF;
  RETURN NEW;
END
$$;

-- Settled amounts per policy and hour of settlement (date_bin from the epoch), for budgets over
-- the last 24 hours (migration 0011): the full hours after the boundary hour, plus that hour's
-- settlements later than now - 24 hours (reservations_settled below).
CREATE TABLE intent.policy_settled_hours (
  policy_id text          NOT NULL CHECK (policy_id ~ '^[0-9]{1,78}$'),
  hour      timestamptz   NOT NULL,
  settled   numeric(78,0) NOT NULL CHECK (settled >= 0),
  PRIMARY KEY (policy_id, hour)
);
-- One index per question (migration 0006): the settled amounts are read by policy and settlement
-- time now. reservations_consumed (policy_id, day) answered the tools' raw day sums, which read
-- the running totals since migration 0007; beside this index a generic plan could pick either.
CREATE INDEX reservations_settled ON intent.reservations (policy_id, settled_at) WHERE state = 'CONSUMED';
DROP INDEX intent.reservations_consumed;

-- No SET clause, so the planner inlines it (as intent.call_minute).
CREATE FUNCTION intent.settlement_hour(p_at timestamptz) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT pg_catalog.date_bin('1 hour'::pg_catalog.interval, p_at, '1970-01-01 00:00:00+00'::pg_catalog.timestamptz)
$$;

-- Migration 0005's running totals, counting what a consumed reservation settled (not what it
-- reserved), and keeping the settled hours. A reservation is only inserted ACTIVE by a decision,
-- so the hot path is unchanged: one UPDATE of the day's row.
CREATE OR REPLACE FUNCTION intent.count_reservation() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.state IN ('ACTIVE', 'CONSUMED') THEN
    UPDATE intent.policy_day_totals t
       SET active   = t.active   - CASE WHEN OLD.state = 'ACTIVE'   THEN OLD.amount ELSE 0 END,
           consumed = t.consumed - CASE WHEN OLD.state = 'CONSUMED' THEN OLD.settled_amount ELSE 0 END
     WHERE t.policy_id = OLD.policy_id AND t.day = OLD.day;
    IF OLD.state = 'CONSUMED' THEN
      UPDATE intent.policy_settled_hours h SET settled = h.settled - OLD.settled_amount
       WHERE h.policy_id = OLD.policy_id AND h.hour = intent.settlement_hour(OLD.settled_at);
    END IF;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.state IN ('ACTIVE', 'CONSUMED') THEN
    UPDATE intent.policy_day_totals t
       SET active   = t.active   + CASE WHEN NEW.state = 'ACTIVE'   THEN NEW.amount ELSE 0 END,
           consumed = t.consumed + CASE WHEN NEW.state = 'CONSUMED' THEN NEW.settled_amount ELSE 0 END
     WHERE t.policy_id = NEW.policy_id AND t.day = NEW.day;
    IF NOT FOUND THEN
      INSERT INTO intent.policy_day_totals AS t (policy_id, day, active, consumed)
      VALUES (NEW.policy_id, NEW.day,
              CASE WHEN NEW.state = 'ACTIVE'   THEN NEW.amount ELSE 0 END,
              CASE WHEN NEW.state = 'CONSUMED' THEN NEW.settled_amount ELSE 0 END)
      ON CONFLICT (policy_id, day) DO UPDATE
        SET active = t.active + excluded.active, consumed = t.consumed + excluded.consumed;
    END IF;
    IF NEW.state = 'CONSUMED' THEN
      INSERT INTO intent.policy_settled_hours AS h (policy_id, hour, settled)
      VALUES (NEW.policy_id, intent.settlement_hour(NEW.settled_at), NEW.settled_amount)
      ON CONFLICT (policy_id, hour) DO UPDATE SET settled = h.settled + excluded.settled;
    END IF;
  END IF;
  RETURN NULL;
END
$$;

DROP TRIGGER reservations_count ON intent.reservations;
CREATE TRIGGER reservations_count
  AFTER INSERT OR DELETE OR UPDATE OF policy_id, day, state, amount, settled_amount, settled_at ON intent.reservations
  FOR EACH ROW EXECUTE FUNCTION intent.count_reservation();

CREATE OR REPLACE FUNCTION intent.forget_counts() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF TG_TABLE_NAME = 'reservations' THEN
    DELETE FROM intent.policy_day_totals;
    DELETE FROM intent.policy_settled_hours;
  ELSE
    DELETE FROM intent.policy_call_minutes;
  END IF;
  RETURN NULL;
END
$$;

INSERT INTO intent.policy_settled_hours (policy_id, hour, settled)
SELECT policy_id, intent.settlement_hour(settled_at), sum(settled_amount)
  FROM intent.reservations
 WHERE state = 'CONSUMED'
 GROUP BY 1, 2;

-- p_groups: a JSON array that must hold exactly one group
--   {"kind", "asset" (ledger asset id chain|token), "entries": [{"account", "amount"}], "idempotencyKey", "memo"?}
-- as ledger.post_group takes it; the group's intent and policy are the reservation's. p_now is the
-- caller's clock, read once the decision lock was held (settlement.ts).
CREATE FUNCTION intent.consume_reservation(p_reservation_id text, p_groups jsonb, p_now timestamptz)
RETURNS intent.reservations
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_policy_id text;
  v_reservation intent.reservations;
  v_group jsonb;
  v_asset text;
  v_moved numeric;
  v_group_id text;
  v_other text;
BEGIN
  SELECT r.policy_id INTO v_policy_id FROM intent.reservations r WHERE r.reservation_id = p_reservation_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'RESERVATION_SETTLEMENT_INVALID: no reservation %', p_reservation_id USING ERRCODE = 'IN003';
  END IF;
  -- The lock preflight takes (held again if the caller holds it), then the row.
  PERFORM pg_advisory_xact_lock(6782, hashtext(v_policy_id));
  SELECT * INTO v_reservation FROM intent.reservations r WHERE r.reservation_id = p_reservation_id FOR UPDATE;
  IF v_reservation.state <> 'ACTIVE' OR v_reservation.expires_at <= p_now THEN
    RAISE EXCEPTION 'reservation % is %; only an ACTIVE reservation before its deadline is consumed', p_reservation_id,
      CASE WHEN v_reservation.state = 'ACTIVE' THEN 'past its deadline' ELSE v_reservation.state END
      USING ERRCODE = 'IN002';
  END IF;

  IF jsonb_typeof(p_groups) IS DISTINCT FROM 'array' OR jsonb_array_length(p_groups) <> 1 THEN
    RAISE EXCEPTION 'RESERVATION_SETTLEMENT_INVALID: consuming reservation % posts exactly one ledger group, not %', p_reservation_id,
      CASE WHEN jsonb_typeof(p_groups) = 'array' THEN jsonb_array_length(p_groups)::text ELSE coalesce(jsonb_typeof(p_groups), 'null') END
      USING ERRCODE = 'IN003';
  END IF;
  v_group := p_groups -> 0;
  IF jsonb_typeof(v_group) IS DISTINCT FROM 'object' OR (v_group - 'kind' - 'asset' - 'entries' - 'idempotencyKey' - 'memo') <> '{}'::jsonb THEN
    RAISE EXCEPTION 'RESERVATION_SETTLEMENT_INVALID: the group is {kind, asset, entries, idempotencyKey, memo}' USING ERRCODE = 'IN003';
  END IF;
  IF (v_group ->> 'kind') IS NULL OR (v_group ->> 'kind') NOT IN ('FUNDING', 'SETTLEMENT', 'RECOGNITION', 'SERVICE_FEE', 'REFUND', 'SUSPENSE_MOVE') THEN
    RAISE EXCEPTION 'RESERVATION_SETTLEMENT_INVALID: a reservation is not settled by a % group', v_group ->> 'kind' USING ERRCODE = 'IN003';
  END IF;
  -- The reservation names its asset as <network>/erc20:<token>, the ledger as <network>|<token>.
  v_asset := replace(v_reservation.asset, '/erc20:', '|');
  IF (v_group ->> 'asset') IS DISTINCT FROM v_asset THEN
    RAISE EXCEPTION 'RESERVATION_SETTLEMENT_INVALID: the group is in %, the reservation in %', v_group ->> 'asset', v_asset
      USING ERRCODE = 'IN003';
  END IF;

  -- What the group moves: the sum of its debits (a balanced group's credits are the same). An
  -- entry that is not a well-formed amount adds nothing here and is refused by ledger.post_group.
  v_moved := 0;
  IF jsonb_typeof(v_group -> 'entries') = 'array' THEN
    SELECT coalesce(sum(CASE WHEN jsonb_typeof(e) = 'object' AND jsonb_typeof(e -> 'amount') IN ('string', 'number')
                                  AND char_length(e ->> 'amount') <= 78 AND (e ->> 'amount') ~ '^[1-9][0-9]*$'
                             THEN (e ->> 'amount')::numeric END), 0)
      INTO v_moved
      FROM jsonb_array_elements(v_group -> 'entries') AS e;
  END IF;
  IF v_moved > v_reservation.amount THEN
    RAISE EXCEPTION 'RESERVATION_SETTLEMENT_INVALID: the group moves %, more than the % reservation % holds', v_moved, v_reservation.amount, p_reservation_id
      USING ERRCODE = 'IN003';
  END IF;

  v_group_id := ledger.post_group(v_group ->> 'kind', v_asset, v_group -> 'entries', v_group ->> 'idempotencyKey',
                                  v_reservation.intent_hash, v_reservation.policy_id, v_group ->> 'memo');
  -- An idempotency key already used answers its first group: that may not settle a second reservation.
  SELECT r.reservation_id INTO v_other FROM intent.reservations r WHERE r.settled_group_id = v_group_id;
  IF FOUND THEN
    RAISE EXCEPTION 'RESERVATION_SETTLEMENT_INVALID: ledger group % already settled reservation %', v_group_id, v_other
      USING ERRCODE = 'IN003';
  END IF;

  PERFORM set_config('intent.consuming', p_reservation_id, true);
  UPDATE intent.reservations r
     SET state = 'CONSUMED', settled_group_id = v_group_id, settled_amount = v_moved, settled_at = p_now, updated_at = p_now
   WHERE r.reservation_id = p_reservation_id
  RETURNING r.* INTO v_reservation;
  PERFORM set_config('intent.consuming', '', true);
  RETURN v_reservation;
END
$$;

REVOKE ALL ON FUNCTION intent.consume_reservation(text, jsonb, timestamptz) FROM PUBLIC;
