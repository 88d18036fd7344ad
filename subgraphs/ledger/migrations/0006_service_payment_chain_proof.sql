-- x402 service payments: FAILED only on chain proof. A reverted transferWithAuthorization moves
-- nothing, but the signed authorization can still move money until validBefore (anyone holding it
-- may submit it), so such a payment stays PENDING with its fee parked in SUSPENSE and the
-- reconciler keeps asking the chain. FAILED is final, so the database now takes it only together
-- with the chain facts, read at one block (evidence_block), that prove the authorization can no
-- longer move money:
--   invalid_exact_evm_payload_authorization_valid_before
--       unused at evidence_block, whose timestamp evidence_chain_time is at or past valid_before
--       (EIP-3009 refuses the authorization from that time on, and block time never goes back)
--   invalid_exact_evm_nonce_already_used
--       used by transaction evidence_tx_hash (at or before evidence_block), which does not carry
--       this payment's Transfer: the nonce is spent, so this authorization can never pay
-- unpaid_tx_hash keeps a settlement transaction of ours that did not pay (it reverted, or another
-- transaction used the authorization first); tx_hash names the transaction that did pay, which is
-- what the PAYMENT-RESPONSE receipt must name.

ALTER TABLE ledger.service_payments
  ADD COLUMN unpaid_tx_hash      text,
  ADD COLUMN evidence_block      numeric(78,0),
  ADD COLUMN evidence_chain_time numeric(78,0),
  ADD COLUMN evidence_tx_hash    text,
  ADD CONSTRAINT service_payments_unpaid_tx_shape CHECK (unpaid_tx_hash IS NULL OR unpaid_tx_hash ~ '^0x[0-9a-f]{64}$'),
  ADD CONSTRAINT service_payments_evidence_tx_shape CHECK (evidence_tx_hash IS NULL OR evidence_tx_hash ~ '^0x[0-9a-f]{64}$'),
  ADD CONSTRAINT service_payments_unpaid_is_not_paid CHECK (unpaid_tx_hash IS NULL OR unpaid_tx_hash IS DISTINCT FROM tx_hash);

-- A payment begins as a SETTLING claim with nothing recorded yet; every later state is reached by
-- the guarded transitions below.
CREATE FUNCTION ledger.service_payment_claim() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.state <> 'SETTLING' OR NEW.tx_hash IS NOT NULL OR NEW.unpaid_tx_hash IS NOT NULL OR NEW.fee_group_id IS NOT NULL
     OR NEW.clear_group_id IS NOT NULL OR NEW.reversal_group_id IS NOT NULL OR NEW.evidence_block IS NOT NULL
     OR NEW.evidence_chain_time IS NOT NULL OR NEW.evidence_tx_hash IS NOT NULL OR NEW.answer_status IS NOT NULL THEN
    RAISE EXCEPTION 'SERVICE_PAYMENT_TRANSITION: a payment starts as a SETTLING claim with nothing recorded'
      USING ERRCODE = 'LG006';
  END IF;
  RETURN NEW;
END;
$$;

CREATE TRIGGER service_payments_claim BEFORE INSERT ON ledger.service_payments
  FOR EACH ROW EXECUTE FUNCTION ledger.service_payment_claim();

-- Whether a row entering FAILED carries the proof described at the top of this file.
CREATE FUNCTION ledger.service_payment_failure_proven(p_row ledger.service_payments) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
  SELECT p_row.evidence_block IS NOT NULL AND (
    (p_row.failure_reason = 'invalid_exact_evm_payload_authorization_valid_before'
       AND p_row.evidence_chain_time IS NOT NULL AND p_row.evidence_chain_time >= p_row.valid_before
       AND p_row.evidence_tx_hash IS NULL)
    OR (p_row.failure_reason = 'invalid_exact_evm_nonce_already_used' AND p_row.evidence_tx_hash IS NOT NULL));
$$;

-- Forward-only state machine (as in 0003), plus: FAILED only with proof; the evidence written once,
-- with FAILED; the recorded transaction replaced only when a PENDING payment is confirmed by
-- another transaction, the replaced one kept as unpaid_tx_hash.
CREATE OR REPLACE FUNCTION ledger.service_payment_transition() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.payment_id <> OLD.payment_id OR NEW.network <> OLD.network OR NEW.asset <> OLD.asset
     OR NEW.payer <> OLD.payer OR NEW.nonce <> OLD.nonce OR NEW.amount <> OLD.amount OR NEW.valid_before <> OLD.valid_before
     OR NEW.pay_to <> OLD.pay_to OR NEW.route <> OLD.route OR NEW.request_digest <> OLD.request_digest THEN
    RAISE EXCEPTION 'SERVICE_PAYMENT_IMMUTABLE: a payment''s authorization and request never change'
      USING ERRCODE = 'LG006';
  END IF;
  IF OLD.tx_hash IS NOT NULL AND NEW.tx_hash IS DISTINCT FROM OLD.tx_hash
     AND NOT (OLD.state = 'PENDING' AND NEW.state = 'SETTLED' AND NEW.tx_hash IS NOT NULL
              AND OLD.unpaid_tx_hash IS NULL AND NEW.unpaid_tx_hash = OLD.tx_hash) THEN
    RAISE EXCEPTION 'SERVICE_PAYMENT_IMMUTABLE: the settlement transaction of % is recorded', OLD.payment_id
      USING ERRCODE = 'LG006';
  END IF;
  IF OLD.unpaid_tx_hash IS NOT NULL AND NEW.unpaid_tx_hash IS DISTINCT FROM OLD.unpaid_tx_hash THEN
    RAISE EXCEPTION 'SERVICE_PAYMENT_IMMUTABLE: the unpaid transaction of % is recorded', OLD.payment_id
      USING ERRCODE = 'LG006';
  END IF;
  IF OLD.fee_group_id IS NOT NULL AND NEW.fee_group_id IS DISTINCT FROM OLD.fee_group_id THEN
    RAISE EXCEPTION 'SERVICE_PAYMENT_IMMUTABLE: the fee of % is booked', OLD.payment_id USING ERRCODE = 'LG006';
  END IF;
  IF (NEW.evidence_block, NEW.evidence_chain_time, NEW.evidence_tx_hash)
       IS DISTINCT FROM (OLD.evidence_block, OLD.evidence_chain_time, OLD.evidence_tx_hash)
     AND NOT (NEW.state = 'FAILED' AND OLD.state <> 'FAILED') THEN
    RAISE EXCEPTION 'SERVICE_PAYMENT_IMMUTABLE: chain evidence is written once, when % fails', OLD.payment_id
      USING ERRCODE = 'LG006';
  END IF;
  IF NOT ((OLD.state = NEW.state AND OLD.state IN ('SETTLING', 'PENDING', 'SETTLED'))
          OR (OLD.state = 'SETTLING' AND NEW.state IN ('PENDING', 'SETTLED', 'FAILED'))
          OR (OLD.state = 'PENDING' AND NEW.state IN ('SETTLED', 'FAILED'))
          OR (OLD.state = 'SETTLED' AND NEW.state = 'ANSWERED')) THEN
    RAISE EXCEPTION 'SERVICE_PAYMENT_TRANSITION: % -> % is not allowed', OLD.state, NEW.state USING ERRCODE = 'LG006';
  END IF;
  IF NEW.state = 'FAILED' AND OLD.state <> 'FAILED' AND NOT ledger.service_payment_failure_proven(NEW) THEN
    RAISE EXCEPTION 'SERVICE_PAYMENT_UNPROVEN_FAILURE: % may fail only when the chain proves its authorization can no longer move money (reason %)',
      OLD.payment_id, NEW.failure_reason USING ERRCODE = 'LG006';
  END IF;
  NEW.updated_at := now();
  RETURN NEW;
END;
$$;
