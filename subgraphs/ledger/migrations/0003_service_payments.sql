-- x402 service payments: one row per payment authorization (payer + nonce on one token), the
-- record that makes "one authorization pays for exactly one call" true across retries, replicas
-- and crashes. The ledger owns it because every state that means "money arrived" must point at
-- the group that books it, and the database checks that it does.
--
-- States:   SETTLING  a replica holds the claim (lease) and is verifying/settling on chain
--           PENDING   sent on chain, no receipt in time: fee parked in SUSPENSE, call not run
--           SETTLED   the chain confirmed the Transfer; fee booked; the call has not answered yet
--                     (a lease while one replica runs it; a lapsed lease lets a re-presentation run it)
--           ANSWERED  the call ran; its answer is recorded and replayed to the same payment
--           FAILED    the chain refused it or the authorization expired unused: nothing moved
-- A rejected verification leaves no row: the claim is deleted, so the same authorization may be
-- presented again once the reason (say, the payer's balance) is fixed.

CREATE TABLE ledger.service_payments (
  payment_id      text        PRIMARY KEY,
  network         text        NOT NULL,
  asset           text        NOT NULL,
  payer           text        NOT NULL,
  nonce           text        NOT NULL,
  pay_to          text        NOT NULL,
  amount          numeric(78,0) NOT NULL,
  valid_before    numeric(78,0) NOT NULL,
  route           text        NOT NULL,
  request_digest  text        NOT NULL,
  state           text        NOT NULL,
  lease_until     timestamptz,
  tx_hash         text,
  fee_group_id    ledger.group_id REFERENCES ledger.groups (group_id),
  clear_group_id  ledger.group_id REFERENCES ledger.groups (group_id),
  reversal_group_id ledger.group_id REFERENCES ledger.groups (group_id),
  failure_reason  text,
  answer_status   integer,
  -- json, not jsonb: a replay must be byte-for-byte the answer first given (jsonb reorders keys).
  answer_body     json,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  settled_at      timestamptz,
  answered_at     timestamptz,
  CONSTRAINT service_payments_id_shape CHECK (payment_id ~ '^pay_[0-9a-f]{24}$'),
  CONSTRAINT service_payments_network_shape CHECK (network ~ '^eip155:[0-9]{1,20}$'),
  CONSTRAINT service_payments_addresses_lowercase CHECK (
    asset ~ '^0x[0-9a-f]{40}$' AND payer ~ '^0x[0-9a-f]{40}$' AND pay_to ~ '^0x[0-9a-f]{40}$'),
  CONSTRAINT service_payments_nonce_shape CHECK (nonce ~ '^0x[0-9a-f]{64}$'),
  CONSTRAINT service_payments_amount_positive CHECK (amount > 0),
  CONSTRAINT service_payments_digest_shape CHECK (request_digest ~ '^[0-9a-f]{64}$'),
  CONSTRAINT service_payments_tx_shape CHECK (tx_hash IS NULL OR tx_hash ~ '^0x[0-9a-f]{64}$'),
  CONSTRAINT service_payments_state_known CHECK (state IN ('SETTLING', 'PENDING', 'SETTLED', 'ANSWERED', 'FAILED')),
  -- The lease names the replica working on it: settling, or running the paid call once settled.
  CONSTRAINT service_payments_settling_has_lease CHECK (state <> 'SETTLING' OR lease_until IS NOT NULL),
  CONSTRAINT service_payments_lease_while_working CHECK (state IN ('SETTLING', 'SETTLED') OR lease_until IS NULL),
  -- Money states point at their ledger groups: parked (PENDING), booked (SETTLED/ANSWERED),
  -- cleared out of SUSPENSE when it was parked first, reversed when the chain said no.
  CONSTRAINT service_payments_pending_parked CHECK (state <> 'PENDING' OR fee_group_id IS NOT NULL),
  CONSTRAINT service_payments_paid_booked CHECK (state NOT IN ('SETTLED', 'ANSWERED') OR (tx_hash IS NOT NULL AND fee_group_id IS NOT NULL AND settled_at IS NOT NULL)),
  CONSTRAINT service_payments_answered_has_answer CHECK ((state = 'ANSWERED') = (answer_status IS NOT NULL AND answered_at IS NOT NULL)),
  CONSTRAINT service_payments_failed_has_reason CHECK (state <> 'FAILED' OR failure_reason IS NOT NULL),
  CONSTRAINT service_payments_failed_unbooked CHECK (state <> 'FAILED' OR fee_group_id IS NULL OR reversal_group_id IS NOT NULL),
  -- One authorization (EIP-3009: token + authorizer + nonce) is one payment.
  CONSTRAINT service_payments_authorization_once UNIQUE (network, asset, payer, nonce)
);
CREATE INDEX service_payments_unresolved ON ledger.service_payments (updated_at)
  WHERE state IN ('SETTLING', 'PENDING', 'SETTLED');

-- Forward-only state machine. A lapsed SETTLING claim may be taken over (SETTLING -> SETTLING).
CREATE FUNCTION ledger.service_payment_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.payment_id <> OLD.payment_id OR NEW.network <> OLD.network OR NEW.asset <> OLD.asset
     OR NEW.payer <> OLD.payer OR NEW.nonce <> OLD.nonce OR NEW.amount <> OLD.amount
     OR NEW.pay_to <> OLD.pay_to OR NEW.route <> OLD.route OR NEW.request_digest <> OLD.request_digest THEN
    RAISE EXCEPTION 'SERVICE_PAYMENT_IMMUTABLE: a payment''s authorization and request never change'
      USING ERRCODE = 'LG006';
  END IF;
  IF OLD.tx_hash IS NOT NULL AND NEW.tx_hash IS DISTINCT FROM OLD.tx_hash THEN
    RAISE EXCEPTION 'SERVICE_PAYMENT_IMMUTABLE: the settlement transaction of % is recorded', OLD.payment_id
      USING ERRCODE = 'LG006';
  END IF;
  IF OLD.fee_group_id IS NOT NULL AND NEW.fee_group_id IS DISTINCT FROM OLD.fee_group_id THEN
    RAISE EXCEPTION 'SERVICE_PAYMENT_IMMUTABLE: the fee of % is booked', OLD.payment_id USING ERRCODE = 'LG006';
  END IF;
  IF NOT ((OLD.state = NEW.state AND OLD.state IN ('SETTLING', 'PENDING', 'SETTLED'))
          OR (OLD.state = 'SETTLING' AND NEW.state IN ('PENDING', 'SETTLED', 'FAILED'))
          OR (OLD.state = 'PENDING' AND NEW.state IN ('SETTLED', 'FAILED'))
          OR (OLD.state = 'SETTLED' AND NEW.state = 'ANSWERED')) THEN
    RAISE EXCEPTION 'SERVICE_PAYMENT_TRANSITION: % -> % is not allowed', OLD.state, NEW.state USING ERRCODE = 'LG006';
  END IF;
  NEW.updated_at := now();
  RETURN NEW;
END;
$$;

CREATE TRIGGER service_payments_transition BEFORE UPDATE ON ledger.service_payments
  FOR EACH ROW EXECUTE FUNCTION ledger.service_payment_transition();

-- Only a claim that never reached the chain may disappear (a rejected verification).
CREATE FUNCTION ledger.service_payment_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.state <> 'SETTLING' OR OLD.tx_hash IS NOT NULL OR OLD.fee_group_id IS NOT NULL THEN
    RAISE EXCEPTION 'SERVICE_PAYMENT_IMMUTABLE: payment % in state % cannot be deleted', OLD.payment_id, OLD.state
      USING ERRCODE = 'LG006';
  END IF;
  RETURN OLD;
END;
$$;

CREATE TRIGGER service_payments_delete BEFORE DELETE ON ledger.service_payments
  FOR EACH ROW EXECUTE FUNCTION ledger.service_payment_delete();
CREATE TRIGGER service_payments_no_truncate BEFORE TRUNCATE ON ledger.service_payments
  FOR EACH STATEMENT EXECUTE FUNCTION ledger.reject_mutation();

-- A booked fee must be a SERVICE_FEE group of this payment's asset for exactly its amount.
CREATE FUNCTION ledger.service_payment_fee_matches() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_kind ledger.group_kind;
  v_asset text;
  v_debit numeric;
BEGIN
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

CREATE TRIGGER service_payments_fee_matches BEFORE INSERT OR UPDATE ON ledger.service_payments
  FOR EACH ROW EXECUTE FUNCTION ledger.service_payment_fee_matches();
