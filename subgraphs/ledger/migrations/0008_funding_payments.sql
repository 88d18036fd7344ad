-- x402 payments that fund a consumer intent (POST /consumer/intents/:intentId/fund). The payment
-- record of migrations 0003/0006 is kept whole (one authorization pays one call, the answer is
-- replayed, an unconfirmed settlement is parked in SUSPENSE, FAILED only on chain proof); a
-- payment now also says what it pays for:
--   purpose FEE      a service fee of a priced route: booked as SERVICE_FEE, exactly as before
--   purpose FUNDING  the funding of consumer intent intent_ref of policy policy_id, paid to the
--                    funding treasury: booked as FUNDING (Dr TREASURY:float / Cr
--                    USER_OBLIGATION:<policy>), posted by the intent subgraph together with the
--                    consumption of the intent's reservation and the intent's move to FUNDED
--                    (subgraphs/intent/consumer/funding/booking.ts), in one transaction.
-- For FUNDING, fee_group_id is the first group the payment booked: the FUNDING group itself, or,
-- when the chain was silent, the park (SUSPENSE_MOVE Dr SUSPENSE:<payment> / Cr
-- USER_OBLIGATION:<policy>) that clear_group_id later unwinds. funding_group_id is the FUNDING
-- group (set with SETTLED), refund_group_id the REFUND owed when the payment arrived for an intent
-- that could no longer be funded (expired meanwhile): the money is booked and owed back, never lost.
-- At most one live FUNDING payment per intent: a second authorization for the same intent cannot
-- even be claimed, so it is never settled (never charged).

ALTER TABLE ledger.service_payments
  ADD COLUMN purpose          text NOT NULL DEFAULT 'FEE',
  ADD COLUMN policy_id        text,
  ADD COLUMN intent_ref       text,
  ADD COLUMN funding_group_id ledger.group_id REFERENCES ledger.groups (group_id),
  ADD COLUMN refund_group_id  ledger.group_id REFERENCES ledger.groups (group_id),
  ADD CONSTRAINT service_payments_purpose_known CHECK (purpose IN ('FEE', 'FUNDING')),
  ADD CONSTRAINT service_payments_funding_names_intent CHECK (
    CASE WHEN purpose = 'FUNDING'
         THEN policy_id ~ '^[0-9]{1,78}$' AND intent_ref ~ '^ci_[0-9a-f]{24}$'
         ELSE policy_id IS NULL AND intent_ref IS NULL AND funding_group_id IS NULL AND refund_group_id IS NULL
    END),
  ADD CONSTRAINT service_payments_funding_booked CHECK (
    purpose <> 'FUNDING' OR state NOT IN ('SETTLED', 'ANSWERED') OR funding_group_id IS NOT NULL);

CREATE UNIQUE INDEX service_payments_one_live_funding ON ledger.service_payments (intent_ref)
  WHERE purpose = 'FUNDING' AND state <> 'FAILED';

-- What a payment pays for is written with the claim and never changes; its FUNDING and REFUND
-- groups are written once, with SETTLED.
CREATE FUNCTION ledger.service_payment_funding_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF NEW.funding_group_id IS NOT NULL OR NEW.refund_group_id IS NOT NULL THEN
      RAISE EXCEPTION 'SERVICE_PAYMENT_TRANSITION: a payment starts as a SETTLING claim with nothing recorded'
        USING ERRCODE = 'LG006';
    END IF;
    RETURN NEW;
  END IF;
  IF NEW.purpose IS DISTINCT FROM OLD.purpose OR NEW.policy_id IS DISTINCT FROM OLD.policy_id
     OR NEW.intent_ref IS DISTINCT FROM OLD.intent_ref THEN
    RAISE EXCEPTION 'SERVICE_PAYMENT_IMMUTABLE: what payment % pays for never changes', OLD.payment_id
      USING ERRCODE = 'LG006';
  END IF;
  IF (NEW.funding_group_id, NEW.refund_group_id) IS DISTINCT FROM (OLD.funding_group_id, OLD.refund_group_id)
     AND NOT (OLD.funding_group_id IS NULL AND OLD.refund_group_id IS NULL AND NEW.state = 'SETTLED'
              AND OLD.state IN ('SETTLING', 'PENDING')) THEN
    RAISE EXCEPTION 'SERVICE_PAYMENT_IMMUTABLE: the funding of % is booked once, when it settles', OLD.payment_id
      USING ERRCODE = 'LG006';
  END IF;
  RETURN NEW;
END;
$$;

CREATE TRIGGER service_payments_funding_guard BEFORE INSERT OR UPDATE ON ledger.service_payments
  FOR EACH ROW EXECUTE FUNCTION ledger.service_payment_funding_guard();

-- Whether group p_group is of one of p_kinds, in the payment's asset, moving exactly its amount.
CREATE FUNCTION ledger.service_payment_group_is(p_row ledger.service_payments, p_group text, p_kinds text[])
RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT EXISTS (
    SELECT 1 FROM ledger.groups g
     WHERE g.group_id = p_group AND g.kind::text = ANY (p_kinds)
       AND g.asset = p_row.network || '|' || p_row.asset
       AND (SELECT sum(e.amount) FROM ledger.entries e WHERE e.group_id = g.group_id AND e.amount > 0) = p_row.amount);
$$;

-- Migration 0003's check, unchanged for fees; a funding payment's first group is its FUNDING
-- group or its SUSPENSE park, and its funding group is a FUNDING group, each for exactly the
-- payment's amount in its asset.
CREATE OR REPLACE FUNCTION ledger.service_payment_fee_matches() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_kind ledger.group_kind;
  v_asset text;
  v_debit numeric;
BEGIN
  IF NEW.purpose = 'FUNDING' THEN
    IF NEW.fee_group_id IS NOT NULL AND (TG_OP = 'INSERT' OR OLD.fee_group_id IS DISTINCT FROM NEW.fee_group_id)
       AND NOT ledger.service_payment_group_is(NEW, NEW.fee_group_id, ARRAY['FUNDING', 'SUSPENSE_MOVE']) THEN
      RAISE EXCEPTION 'SERVICE_PAYMENT_FEE_MISMATCH: group % is not a FUNDING or SUSPENSE_MOVE of % on %|%',
        NEW.fee_group_id, NEW.amount, NEW.network, NEW.asset USING ERRCODE = 'LG006';
    END IF;
    IF NEW.funding_group_id IS NOT NULL AND (TG_OP = 'INSERT' OR OLD.funding_group_id IS DISTINCT FROM NEW.funding_group_id)
       AND NOT ledger.service_payment_group_is(NEW, NEW.funding_group_id, ARRAY['FUNDING']) THEN
      RAISE EXCEPTION 'SERVICE_PAYMENT_FEE_MISMATCH: group % is not a FUNDING of % on %|%',
        NEW.funding_group_id, NEW.amount, NEW.network, NEW.asset USING ERRCODE = 'LG006';
    END IF;
    RETURN NEW;
  END IF;
  IF NEW.fee_group_id IS NULL OR (TG_OP = 'UPDATE' AND OLD.fee_group_id IS NOT DISTINCT FROM NEW.fee_group_id) THEN
    RETURN NEW;
  END IF;
  SELECT g.kind, g.asset, (SELECT sum(e.amount) FROM ledger.entries e WHERE e.group_id = g.group_id AND e.amount > 0)
    INTO v_kind, v_asset, v_debit
    FROM ledger.groups g WHERE g.group_id = NEW.fee_group_id;
  IF v_kind IS DISTINCT FROM 'SERVICE_FEE' OR v_asset IS DISTINCT FROM NEW.network || '|' || NEW.asset
     OR v_debit IS DISTINCT FROM NEW.amount THEN
    RAISE EXCEPTION 'SERVICE_PAYMENT_FEE_MISMATCH: group % is not a SERVICE_FEE of % on %|%',
      NEW.fee_group_id, NEW.amount, NEW.network, NEW.asset USING ERRCODE = 'LG006';
  END IF;
  RETURN NEW;
END;
$$;

GRANT EXECUTE ON FUNCTION ledger.service_payment_group_is(ledger.service_payments, text, text[]),
                          ledger.service_payment_funding_guard() TO spend_control_service;
