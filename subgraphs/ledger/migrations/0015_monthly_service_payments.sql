-- The x402 payment records partitioned by month (issue #32 item 5; docs/operations.md
-- "Partitioning the append-only tables", docs/x402.md "Payment records by month"). Every paid
-- call writes one, so ledger.service_payments grows with the paid traffic. A payment id starts with
-- the millisecond it was made (time-ordered since 2026-11-29), so a month of payments is one range
-- of ids, 'pay_' and the month's first millisecond in 12 hex digits (then 12 zeros) up to the next
-- month's: the table is PARTITION BY RANGE (payment_id), months named service_payments_pYYYY_MM,
-- and a DEFAULT partition takes any id no month covers (an id made before ids were time-ordered,
-- whose digits are random, or a clock far from today), so a claim never fails for want of a
-- partition. payment_id is compared byte-wise (COLLATE "C"), as the ids were made.
--
-- What a partitioned table cannot hold, and where it went:
--   * "One record per authorization" (UNIQUE (network, asset, payer, nonce), the double-payment
--     guard) holds across every month in ledger.payment_authorizations, one narrow row per payment
--     whose primary key keeps the constraint's name, service_payments_authorization_once. The
--     claims write the key and the record in one statement (ledger.claim_fee_payments: the key
--     with ON CONFLICT DO NOTHING, so exactly one of any number of concurrent claims wins, as
--     before); a record written past them claims its key when it is inserted, or is refused with
--     the same 23505 and constraint name.
--   * "At most one live funding payment per intent" (the partial unique index
--     service_payments_one_live_funding) holds in ledger.live_fundings (intent → payment), whose
--     primary key keeps that name: claimed with the record (ledger.claim_funding_payment), given
--     back when the payment fails or its claim is forgotten.
--   A forgotten claim (deleted before it reached the chain) gives its keys back. Otherwise the
--   keys stay, after archive too: an archived authorization is still one used.
-- The service role reads the keys and never writes them: it claims through the two functions (or
-- an INSERT, whose trigger claims), and the keys follow the records.
--
-- Plans. A statement that names its payments by id with their values known when it is planned
-- (the service's statements are planned at each call) reads only their months. settle_service_fees
-- runs its UPDATE the same way (EXECUTE), and findPayment reads the one month through
-- ledger.payment_by_authorization. Reads by state (the reconciler's sweep) read every month's
-- small partial index, and reads by transaction hash every month's index on it.
--
-- Archive: ledger.detach_payment_month_partitions detaches whole past months, oldest first, and
-- stops at the first month still in use: a payment the chain has not decided (SETTLING or
-- PENDING, the reconciler's), or an authorization that is still valid, or expired less than a day
-- ago (a presentation of it must find its record; once validBefore has passed the paywall refuses
-- it before reading any record, and the day covers a gateway whose clock runs behind).

-- ---------------------------------------------------------------------------------------------
-- The months: bounds, and the pair of functions (the worker makes the coming months; the owner
-- detaches past ones).
-- ---------------------------------------------------------------------------------------------

/**
 * The smallest payment id made at or after p_at's millisecond (its random digits all zero): a
 * month's lower bound, itself a well-formed id.
 */
CREATE FUNCTION ledger.payment_id_floor(p_at timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT 'pay_' || lpad(to_hex(floor(extract(epoch FROM p_at) * 1000)::bigint), 12, '0') || '000000000000'
$$;
REVOKE ALL ON FUNCTION ledger.payment_id_floor(timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.payment_id_floor(timestamptz) TO spend_control_service;

/**
 * The month partitions of ledger.service_payments from p_from's month through p_through's (UTC),
 * unless made; returns the tables made. A month whose payments already sit in the DEFAULT
 * partition is left there (a month beside them would be refused).
 */
CREATE FUNCTION ledger.ensure_payment_month_partitions(p_from timestamptz, p_through timestamptz)
RETURNS SETOF text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_month timestamp := date_trunc('month', p_from AT TIME ZONE 'UTC');
  v_last timestamp := date_trunc('month', p_through AT TIME ZONE 'UTC');
  v_low text;
  v_high text;
  v_name text;
BEGIN
  IF p_from IS NULL OR p_through IS NULL OR v_last < v_month OR v_last > v_month + interval '120 months' THEN
    RAISE EXCEPTION 'PARTITION_RANGE_INVALID: months from % through % (at most 120)', p_from, p_through
      USING ERRCODE = '22023';
  END IF;
  -- Waiting behind a long transaction on the payments would stall the paid calls queued behind
  -- this; the worker tries again next round instead.
  PERFORM set_config('lock_timeout', '2s', true);
  PERFORM pg_advisory_xact_lock(hashtext('ledger.ensure_payment_month_partitions'), 0);
  WHILE v_month <= v_last LOOP
    v_low := ledger.payment_id_floor(v_month AT TIME ZONE 'UTC');
    v_high := ledger.payment_id_floor((v_month + interval '1 month') AT TIME ZONE 'UTC');
    v_name := format('service_payments_p%s', to_char(v_month, 'YYYY_MM'));
    IF to_regclass(format('ledger.%I', v_name)) IS NULL
       AND NOT EXISTS (SELECT 1 FROM ledger.service_payments_pdefault d
                        WHERE d.payment_id >= v_low AND d.payment_id < v_high) THEN
      -- Made apart and attached: ATTACH lets the payments' writers go on.
      EXECUTE format('CREATE TABLE ledger.%I (LIKE ledger.service_payments INCLUDING DEFAULTS INCLUDING CONSTRAINTS)',
                     v_name);
      EXECUTE format('ALTER TABLE ledger.service_payments ATTACH PARTITION ledger.%I FOR VALUES FROM (%L) TO (%L)',
                     v_name, v_low, v_high);
      -- Reached through its table only, as a month of groups is (migration 0014's guard serves
      -- any month of the ledger's: the service may read it, never write it; no TRUNCATE).
      PERFORM ledger.guard_group_month(v_name);
      RETURN NEXT v_name;
    END IF;
    v_month := v_month + interval '1 month';
  END LOOP;
END
$$;
REVOKE ALL ON FUNCTION ledger.ensure_payment_month_partitions(timestamptz, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.ensure_payment_month_partitions(timestamptz, timestamptz) TO spend_control_service;

/**
 * Detaches the month partitions of ledger.service_payments that end at or before p_before (never
 * the current month or a later one, nor the DEFAULT partition), oldest first; returns their names.
 * It stops, with a notice, at the first month still in use: one holding a payment the chain has
 * not decided (SETTLING or PENDING), or an authorization still valid (validBefore, in chain
 * seconds, not yet a day past by this clock: a day of slack for the gateways' clocks), which a
 * client may still present.
 */
CREATE FUNCTION ledger.detach_payment_month_partitions(p_before timestamptz)
RETURNS SETOF text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_cut timestamp := least(p_before AT TIME ZONE 'UTC', date_trunc('month', now() AT TIME ZONE 'UTC'));
  v_part record;
  v_in_use text;
BEGIN
  IF p_before IS NULL THEN
    RAISE EXCEPTION 'PARTITION_RANGE_INVALID: detach before what?' USING ERRCODE = '22023';
  END IF;
  PERFORM set_config('lock_timeout', '5s', true);
  FOR v_part IN
    SELECT c.relname,
           to_timestamp(substring(c.relname FROM '^service_payments_p([0-9]{4}_[0-9]{2})$'), 'YYYY_MM')::timestamp AS month
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'ledger.service_payments'::regclass AND c.relname ~ '^service_payments_p[0-9]{4}_[0-9]{2}$'
     ORDER BY 2
  LOOP
    EXIT WHEN v_part.month + interval '1 month' > v_cut;
    -- Held until COMMIT: nothing in the month changes between the check and the detach (a past
    -- month takes no new claims: its ids are past).
    EXECUTE format('LOCK TABLE ledger.%I IN SHARE MODE', v_part.relname);
    EXECUTE format(
      $q$SELECT CASE
                 WHEN EXISTS (SELECT 1 FROM ledger.%1$I p WHERE p.state IN ('SETTLING', 'PENDING'))
                   THEN 'a payment the chain has not decided'
                 WHEN EXISTS (SELECT 1 FROM ledger.%1$I p
                               WHERE p.valid_before >= floor(extract(epoch FROM now() - interval '1 day')))
                   THEN 'an authorization still valid (or expired less than a day ago)'
               END$q$,
      v_part.relname) INTO v_in_use;
    IF v_in_use IS NOT NULL THEN
      RAISE NOTICE 'PAYMENT_MONTH_IN_USE: % holds %; it and later months stay', v_part.relname, v_in_use;
      EXIT;
    END IF;
    EXECUTE format('ALTER TABLE ledger.service_payments DETACH PARTITION ledger.%I', v_part.relname);
    RETURN NEXT v_part.relname;
  END LOOP;
END
$$;
REVOKE ALL ON FUNCTION ledger.detach_payment_month_partitions(timestamptz) FROM PUBLIC, spend_control_service;

-- ---------------------------------------------------------------------------------------------
-- The conversion: the readers of the row type go first, the table is set aside under another
-- name, and made again partitioned with its rows; its keys move to the key tables.
-- ---------------------------------------------------------------------------------------------

DROP FUNCTION ledger.settle_service_fees(jsonb, text[], text[]);
DROP FUNCTION ledger.service_payment_group_is(ledger.service_payments, text, text[]);
DROP FUNCTION ledger.service_payment_failure_proven(ledger.service_payments);

ALTER TABLE ledger.service_payments RENAME TO service_payments_unpartitioned;
DO $$
DECLARE
  v_index record;
BEGIN
  FOR v_index IN
    SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     WHERE i.indrelid = 'ledger.service_payments_unpartitioned'::regclass
  LOOP
    EXECUTE format('ALTER INDEX ledger.%I RENAME TO %I', v_index.relname, v_index.relname || '_unpartitioned');
  END LOOP;
END
$$;

CREATE TABLE ledger.service_payments (
  payment_id          text COLLATE "C" NOT NULL,
  network             text NOT NULL,
  asset               text NOT NULL,
  payer               text NOT NULL,
  nonce               text NOT NULL,
  pay_to              text NOT NULL,
  amount              numeric(78,0) NOT NULL,
  valid_before        numeric(78,0) NOT NULL,
  route               text NOT NULL,
  request_digest      text NOT NULL,
  state               text NOT NULL,
  lease_until         timestamptz,
  tx_hash             text,
  fee_group_id        ledger.group_id,
  clear_group_id      ledger.group_id,
  reversal_group_id   ledger.group_id,
  failure_reason      text,
  answer_status       integer,
  answer_body         json,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  settled_at          timestamptz,
  answered_at         timestamptz,
  unpaid_tx_hash      text,
  evidence_block      numeric(78,0),
  evidence_chain_time numeric(78,0),
  evidence_tx_hash    text,
  purpose             text NOT NULL DEFAULT 'FEE',
  policy_id           text,
  intent_ref          text,
  funding_group_id    ledger.group_id,
  refund_group_id     ledger.group_id,
  CONSTRAINT service_payments_pkey PRIMARY KEY (payment_id),
  CONSTRAINT service_payments_addresses_lowercase CHECK (asset ~ '^0x[0-9a-f]{40}$' AND payer ~ '^0x[0-9a-f]{40}$' AND pay_to ~ '^0x[0-9a-f]{40}$'),
  CONSTRAINT service_payments_amount_positive CHECK (amount > 0),
  CONSTRAINT service_payments_answered_has_answer CHECK ((state = 'ANSWERED') = (answer_status IS NOT NULL AND answered_at IS NOT NULL)),
  CONSTRAINT service_payments_digest_shape CHECK (request_digest ~ '^[0-9a-f]{64}$'),
  CONSTRAINT service_payments_evidence_tx_shape CHECK (evidence_tx_hash IS NULL OR evidence_tx_hash ~ '^0x[0-9a-f]{64}$'),
  CONSTRAINT service_payments_failed_has_reason CHECK (state <> 'FAILED' OR failure_reason IS NOT NULL),
  CONSTRAINT service_payments_failed_unbooked CHECK (state <> 'FAILED' OR fee_group_id IS NULL OR reversal_group_id IS NOT NULL),
  CONSTRAINT service_payments_funding_booked CHECK (purpose <> 'FUNDING' OR state NOT IN ('SETTLED', 'ANSWERED') OR funding_group_id IS NOT NULL),
  CONSTRAINT service_payments_funding_names_intent CHECK (
    CASE WHEN purpose = 'FUNDING' THEN policy_id ~ '^[0-9]{1,78}$' AND intent_ref ~ '^ci_[0-9a-f]{24}$'
         ELSE policy_id IS NULL AND intent_ref IS NULL AND funding_group_id IS NULL AND refund_group_id IS NULL END),
  CONSTRAINT service_payments_id_shape CHECK (payment_id ~ '^pay_[0-9a-f]{24}$'),
  CONSTRAINT service_payments_lease_while_working CHECK (state IN ('SETTLING', 'SETTLED') OR lease_until IS NULL),
  CONSTRAINT service_payments_network_shape CHECK (network ~ '^eip155:[0-9]{1,20}$'),
  CONSTRAINT service_payments_nonce_shape CHECK (nonce ~ '^0x[0-9a-f]{64}$'),
  CONSTRAINT service_payments_paid_booked CHECK (state NOT IN ('SETTLED', 'ANSWERED') OR (tx_hash IS NOT NULL AND fee_group_id IS NOT NULL AND settled_at IS NOT NULL)),
  CONSTRAINT service_payments_pending_parked CHECK (state <> 'PENDING' OR fee_group_id IS NOT NULL),
  CONSTRAINT service_payments_purpose_known CHECK (purpose IN ('FEE', 'FUNDING')),
  CONSTRAINT service_payments_settling_has_lease CHECK (state <> 'SETTLING' OR lease_until IS NOT NULL),
  CONSTRAINT service_payments_state_known CHECK (state IN ('SETTLING', 'PENDING', 'SETTLED', 'ANSWERED', 'FAILED')),
  CONSTRAINT service_payments_tx_shape CHECK (tx_hash IS NULL OR tx_hash ~ '^0x[0-9a-f]{64}$'),
  CONSTRAINT service_payments_unpaid_is_not_paid CHECK (unpaid_tx_hash IS NULL OR unpaid_tx_hash IS DISTINCT FROM tx_hash),
  CONSTRAINT service_payments_unpaid_tx_shape CHECK (unpaid_tx_hash IS NULL OR unpaid_tx_hash ~ '^0x[0-9a-f]{64}$')
) PARTITION BY RANGE (payment_id);

CREATE TABLE ledger.service_payments_pdefault PARTITION OF ledger.service_payments DEFAULT;

-- The keys of every payment, in every month (and after archive).
CREATE TABLE ledger.payment_authorizations (
  network    text NOT NULL,
  asset      text NOT NULL,
  payer      text NOT NULL,
  nonce      text NOT NULL,
  payment_id text COLLATE "C" NOT NULL,
  CONSTRAINT service_payments_authorization_once PRIMARY KEY (network, asset, payer, nonce),
  CONSTRAINT payment_authorizations_payment_once UNIQUE (payment_id)
);
CREATE TABLE ledger.live_fundings (
  intent_ref text NOT NULL,
  payment_id text COLLATE "C" NOT NULL,
  CONSTRAINT service_payments_one_live_funding PRIMARY KEY (intent_ref),
  CONSTRAINT live_fundings_payment_once UNIQUE (payment_id)
);

SELECT ledger.ensure_payment_month_partitions(
         greatest(least(now(), (SELECT min(created_at) FROM ledger.service_payments_unpartitioned)),
                  now() - interval '116 months'),
         now() + interval '3 months');

INSERT INTO ledger.service_payments SELECT
    payment_id, network, asset, payer, nonce, pay_to, amount, valid_before, route, request_digest, state,
    lease_until, tx_hash, fee_group_id, clear_group_id, reversal_group_id, failure_reason, answer_status,
    answer_body, created_at, updated_at, settled_at, answered_at, unpaid_tx_hash, evidence_block,
    evidence_chain_time, evidence_tx_hash, purpose, policy_id, intent_ref, funding_group_id, refund_group_id
  FROM ledger.service_payments_unpartitioned;
INSERT INTO ledger.payment_authorizations (network, asset, payer, nonce, payment_id)
  SELECT network, asset, payer, nonce, payment_id FROM ledger.service_payments_unpartitioned;
INSERT INTO ledger.live_fundings (intent_ref, payment_id)
  SELECT intent_ref, payment_id FROM ledger.service_payments_unpartitioned
   WHERE purpose = 'FUNDING' AND state <> 'FAILED';

DROP TABLE ledger.service_payments_unpartitioned;

-- The indexes of before (migrations 0003, 0009), each on every month.
CREATE INDEX service_payments_tx_payer ON ledger.service_payments (tx_hash, payer) WHERE tx_hash IS NOT NULL;
CREATE INDEX service_payments_unresolved ON ledger.service_payments (updated_at)
  WHERE state IN ('SETTLING', 'PENDING', 'SETTLED');

-- ---------------------------------------------------------------------------------------------
-- The readers of the row type, as migrations 0006, 0008 and 0010 made them (settle_service_fees
-- now names its payments' months).
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION ledger.service_payment_failure_proven(p_row ledger.service_payments) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
  SELECT p_row.evidence_block IS NOT NULL AND (
    (p_row.failure_reason = 'invalid_exact_evm_payload_authorization_valid_before'
       AND p_row.evidence_chain_time IS NOT NULL AND p_row.evidence_chain_time >= p_row.valid_before
       AND p_row.evidence_tx_hash IS NULL)
    OR (p_row.failure_reason = 'invalid_exact_evm_nonce_already_used' AND p_row.evidence_tx_hash IS NOT NULL));
$$;

CREATE FUNCTION ledger.service_payment_group_is(p_row ledger.service_payments, p_group text, p_kinds text[])
RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT coalesce(g.present AND g.kind::text = ANY (p_kinds) AND g.asset = p_row.network || '|' || p_row.asset
                  AND (SELECT e.debits FROM ledger.month_entries(p_group) e) = p_row.amount, false)
    FROM ledger.month_group(p_group) g;
$$;

-- As migration 0010, the UPDATE planned with its payment ids as values, so it reads their months
-- only (a plan kept for any ids would hold every month).
CREATE FUNCTION ledger.settle_service_fees(p_groups jsonb, p_payment_ids text[], p_tx_hashes text[])
RETURNS SETOF ledger.service_payments
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_count  integer := coalesce(array_length(p_payment_ids, 1), 0);
  v_groups text[];
  v_rows   ledger.service_payments[];
BEGIN
  IF v_count = 0 OR v_count <> coalesce(array_length(p_tx_hashes, 1), 0)
     OR jsonb_typeof(p_groups) IS DISTINCT FROM 'array' OR jsonb_array_length(p_groups) <> v_count
     OR (SELECT count(DISTINCT id) FROM unnest(p_payment_ids) AS t(id)) <> v_count THEN
    RAISE EXCEPTION 'settle_service_fees: one fee group and one transaction for each of distinct payments' USING ERRCODE = '22023';
  END IF;
  v_groups := ledger.post_groups(p_groups);
  EXECUTE $q$
    WITH settled AS (
      UPDATE ledger.service_payments p
         SET state = 'SETTLED', tx_hash = t.tx_hash, fee_group_id = t.fee_group_id, settled_at = now()
        FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS t(payment_id, tx_hash, fee_group_id, position)
       WHERE p.payment_id = t.payment_id AND p.payment_id = ANY ($1::text[]) AND p.state = 'SETTLING'
      RETURNING p AS payment, t.position
    )
    SELECT array_agg(s.payment ORDER BY s.position) FROM settled s$q$
    INTO v_rows USING p_payment_ids, p_tx_hashes, v_groups;
  IF coalesce(array_length(v_rows, 1), 0) <> v_count THEN
    RAISE EXCEPTION 'settle_service_fees: % of % payments were still SETTLING',
      coalesce(array_length(v_rows, 1), 0), v_count;
  END IF;
  RETURN QUERY SELECT * FROM unnest(v_rows);
END;
$$;

-- ---------------------------------------------------------------------------------------------
-- The keys: claimed with the record, given back when a claim is forgotten or a funding fails.
-- ---------------------------------------------------------------------------------------------

/**
 * Last of the checks of a new record (triggers fire by name): it holds its authorization's key
 * and, when it funds an intent, that intent's live funding. A claim function wrote them in the
 * same statement; a record written otherwise claims them here. A key another payment holds is
 * refused as the unique constraints it replaces refused it (23505, the same constraint names).
 */
CREATE FUNCTION ledger.service_payment_claim_keys() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_holder text;
BEGIN
  SELECT k.payment_id INTO v_holder FROM ledger.payment_authorizations k
   WHERE k.network = NEW.network AND k.asset = NEW.asset AND k.payer = NEW.payer AND k.nonce = NEW.nonce;
  IF NOT FOUND THEN
    INSERT INTO ledger.payment_authorizations (network, asset, payer, nonce, payment_id)
    VALUES (NEW.network, NEW.asset, NEW.payer, NEW.nonce, NEW.payment_id);
  ELSIF v_holder <> NEW.payment_id THEN
    RAISE EXCEPTION 'duplicate key value violates unique constraint "service_payments_authorization_once"'
      USING ERRCODE = 'unique_violation', SCHEMA = 'ledger', TABLE = 'service_payments',
            CONSTRAINT = 'service_payments_authorization_once',
            DETAIL = format('Key (network, asset, payer, nonce)=(%s, %s, %s, %s) already exists.',
                            NEW.network, NEW.asset, NEW.payer, NEW.nonce);
  END IF;
  IF NEW.purpose = 'FUNDING' AND NEW.state <> 'FAILED' THEN
    SELECT f.payment_id INTO v_holder FROM ledger.live_fundings f WHERE f.intent_ref = NEW.intent_ref;
    IF NOT FOUND THEN
      INSERT INTO ledger.live_fundings (intent_ref, payment_id) VALUES (NEW.intent_ref, NEW.payment_id);
    ELSIF v_holder <> NEW.payment_id THEN
      RAISE EXCEPTION 'duplicate key value violates unique constraint "service_payments_one_live_funding"'
        USING ERRCODE = 'unique_violation', SCHEMA = 'ledger', TABLE = 'service_payments',
              CONSTRAINT = 'service_payments_one_live_funding',
              DETAIL = format('Key (intent_ref)=(%s) already exists.', NEW.intent_ref);
    END IF;
  END IF;
  RETURN NEW;
END
$$;
REVOKE ALL ON FUNCTION ledger.service_payment_claim_keys() FROM PUBLIC;

/** A forgotten claim gives its keys back; a funding payment that failed gives its intent back. */
CREATE FUNCTION ledger.service_payment_free_keys() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    DELETE FROM ledger.payment_authorizations WHERE payment_id = OLD.payment_id;
  END IF;
  IF OLD.purpose = 'FUNDING' THEN
    DELETE FROM ledger.live_fundings WHERE payment_id = OLD.payment_id;
  END IF;
  RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION ledger.service_payment_free_keys() FROM PUBLIC;

/**
 * Fee claims in one statement: each payment is recorded (SETTLING, leased for its lease_ms) unless
 * its authorization has a record, or an earlier claim of the same call took it; returns the
 * records made. The key is written first with ON CONFLICT DO NOTHING: of concurrent claims of one
 * authorization, exactly one writes it (the others wait for it to commit, then find it).
 */
CREATE FUNCTION ledger.claim_fee_payments(
  p_payment_ids text[], p_networks text[], p_assets text[], p_payers text[], p_nonces text[],
  p_pay_tos text[], p_amounts numeric[], p_valid_befores numeric[], p_routes text[],
  p_request_digests text[], p_lease_ms integer[])
RETURNS SETOF ledger.service_payments
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  WITH claims AS (
    SELECT * FROM unnest(p_payment_ids, p_networks, p_assets, p_payers, p_nonces, p_pay_tos, p_amounts,
                         p_valid_befores, p_routes, p_request_digests, p_lease_ms)
             WITH ORDINALITY AS t(payment_id, network, asset, payer, nonce, pay_to, amount, valid_before,
                                  route, request_digest, lease_ms, position)
  ), claimed AS (
    INSERT INTO ledger.payment_authorizations AS k (network, asset, payer, nonce, payment_id)
    SELECT c.network, c.asset, c.payer, c.nonce, c.payment_id FROM claims c ORDER BY c.position
    ON CONFLICT DO NOTHING
    RETURNING k.payment_id
  )
  INSERT INTO ledger.service_payments
    (payment_id, network, asset, payer, nonce, pay_to, amount, valid_before, route, request_digest,
     state, lease_until)
  SELECT c.payment_id, c.network, c.asset, c.payer, c.nonce, c.pay_to, c.amount, c.valid_before,
         c.route, c.request_digest, 'SETTLING', now() + make_interval(secs => c.lease_ms::double precision / 1000)
    FROM claims c
   WHERE c.payment_id IN (SELECT payment_id FROM claimed)
   ORDER BY c.position
  RETURNING *
$$;
REVOKE ALL ON FUNCTION ledger.claim_fee_payments(text[], text[], text[], text[], text[], text[], numeric[],
                                                 numeric[], text[], text[], integer[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.claim_fee_payments(text[], text[], text[], text[], text[], text[], numeric[],
                                                    numeric[], text[], text[], integer[]) TO spend_control_service;

/**
 * A funding claim: the payment is recorded (SETTLING, leased) unless its authorization has a
 * record or another payment funds (or is funding) the same intent; returns the record made, or
 * nothing.
 */
CREATE FUNCTION ledger.claim_funding_payment(
  p_payment_id text, p_network text, p_asset text, p_payer text, p_nonce text, p_pay_to text,
  p_amount numeric, p_valid_before numeric, p_route text, p_request_digest text, p_lease_ms integer,
  p_policy_id text, p_intent_ref text)
RETURNS SETOF ledger.service_payments
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  INSERT INTO ledger.payment_authorizations (network, asset, payer, nonce, payment_id)
  VALUES (p_network, p_asset, p_payer, p_nonce, p_payment_id)
  ON CONFLICT DO NOTHING;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  INSERT INTO ledger.live_fundings (intent_ref, payment_id) VALUES (p_intent_ref, p_payment_id)
  ON CONFLICT DO NOTHING;
  IF NOT FOUND THEN
    -- Written by this transaction alone: a concurrent claim of the authorization waits on it and
    -- then writes it itself.
    DELETE FROM ledger.payment_authorizations WHERE payment_id = p_payment_id;
    RETURN;
  END IF;
  RETURN QUERY
    INSERT INTO ledger.service_payments
      (payment_id, network, asset, payer, nonce, pay_to, amount, valid_before, route, request_digest,
       state, lease_until, purpose, policy_id, intent_ref)
    VALUES (p_payment_id, p_network, p_asset, p_payer, p_nonce, p_pay_to, p_amount, p_valid_before, p_route,
            p_request_digest, 'SETTLING', now() + make_interval(secs => p_lease_ms::double precision / 1000),
            'FUNDING', p_policy_id, p_intent_ref)
    RETURNING *;
END
$$;
REVOKE ALL ON FUNCTION ledger.claim_funding_payment(text, text, text, text, text, text, numeric, numeric, text,
                                                    text, integer, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.claim_funding_payment(text, text, text, text, text, text, numeric, numeric, text,
                                                       text, integer, text, text) TO spend_control_service;

/**
 * The record of an authorization, read from its month (the key names the payment; the read of the
 * record is planned with its id as a value). No row when there is none, or its month is archived.
 */
CREATE FUNCTION ledger.payment_by_authorization(p_network text, p_asset text, p_payer text, p_nonce text)
RETURNS SETOF ledger.service_payments
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_payment_id text;
BEGIN
  SELECT k.payment_id INTO v_payment_id FROM ledger.payment_authorizations k
   WHERE k.network = p_network AND k.asset = p_asset AND k.payer = p_payer AND k.nonce = p_nonce;
  IF FOUND THEN
    RETURN QUERY EXECUTE 'SELECT * FROM ledger.service_payments WHERE payment_id = $1' USING v_payment_id;
  END IF;
END
$$;
REVOKE ALL ON FUNCTION ledger.payment_by_authorization(text, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.payment_by_authorization(text, text, text, text) TO spend_control_service;

-- ---------------------------------------------------------------------------------------------
-- The triggers of before (migrations 0003, 0006, 0008, 0014) and the keys', on the table and so on
-- every month; the migration runner makes them fire ALWAYS.
-- ---------------------------------------------------------------------------------------------

CREATE TRIGGER service_payments_claim BEFORE INSERT ON ledger.service_payments
  FOR EACH ROW EXECUTE FUNCTION ledger.service_payment_claim();
CREATE TRIGGER service_payments_delete BEFORE DELETE ON ledger.service_payments
  FOR EACH ROW EXECUTE FUNCTION ledger.service_payment_delete();
CREATE TRIGGER service_payments_fee_matches BEFORE INSERT OR UPDATE ON ledger.service_payments
  FOR EACH ROW EXECUTE FUNCTION ledger.service_payment_fee_matches();
CREATE TRIGGER service_payments_funding_guard BEFORE INSERT OR UPDATE ON ledger.service_payments
  FOR EACH ROW EXECUTE FUNCTION ledger.service_payment_funding_guard();
CREATE TRIGGER service_payments_groups_exist BEFORE INSERT OR UPDATE ON ledger.service_payments
  FOR EACH ROW EXECUTE FUNCTION ledger.service_payment_groups_exist();
CREATE TRIGGER service_payments_keys BEFORE INSERT ON ledger.service_payments
  FOR EACH ROW EXECUTE FUNCTION ledger.service_payment_claim_keys();
CREATE TRIGGER service_payments_keys_freed AFTER DELETE ON ledger.service_payments
  FOR EACH ROW EXECUTE FUNCTION ledger.service_payment_free_keys();
CREATE TRIGGER service_payments_funding_failed AFTER UPDATE OF state ON ledger.service_payments
  FOR EACH ROW WHEN (NEW.purpose = 'FUNDING' AND NEW.state = 'FAILED' AND OLD.state <> 'FAILED')
  EXECUTE FUNCTION ledger.service_payment_free_keys();
CREATE TRIGGER service_payments_no_truncate BEFORE TRUNCATE ON ledger.service_payments
  FOR EACH STATEMENT EXECUTE FUNCTION ledger.reject_mutation();
CREATE TRIGGER service_payments_transition BEFORE UPDATE ON ledger.service_payments
  FOR EACH ROW EXECUTE FUNCTION ledger.service_payment_transition();
-- The months made above were guarded by ensure_payment_month_partitions.
SELECT ledger.guard_group_month('service_payments_pdefault');

-- A key changes only by being given back, through the triggers above.
CREATE TRIGGER payment_authorizations_immutable BEFORE UPDATE OR TRUNCATE ON ledger.payment_authorizations
  FOR EACH STATEMENT EXECUTE FUNCTION ledger.reject_mutation();
CREATE TRIGGER live_fundings_immutable BEFORE UPDATE OR TRUNCATE ON ledger.live_fundings
  FOR EACH STATEMENT EXECUTE FUNCTION ledger.reject_mutation();

REVOKE ALL ON ledger.service_payments, ledger.payment_authorizations, ledger.live_fundings
  FROM PUBLIC, spend_control_service;
GRANT SELECT, INSERT, UPDATE, DELETE ON ledger.service_payments TO spend_control_service;
GRANT SELECT ON ledger.payment_authorizations, ledger.live_fundings TO spend_control_service;
GRANT EXECUTE ON FUNCTION ledger.service_payment_failure_proven(ledger.service_payments),
                          ledger.service_payment_group_is(ledger.service_payments, text, text[]),
                          ledger.settle_service_fees(jsonb, text[], text[])
  TO spend_control_service;

-- The planner's statistics for the months that hold the moved rows, and the keys, if any (an empty
-- month is left never analyzed: migration 0014 says why).
DO $$
DECLARE
  v_part regclass;
BEGIN
  FOR v_part IN
    SELECT i.inhrelid::regclass FROM pg_inherits i WHERE i.inhparent = 'ledger.service_payments'::regclass
  LOOP
    IF pg_relation_size(v_part) > 0 THEN
      EXECUTE format('ANALYZE %s', v_part);
    END IF;
  END LOOP;
  IF EXISTS (SELECT 1 FROM ledger.payment_authorizations) THEN
    ANALYZE ledger.payment_authorizations, ledger.live_fundings;
  END IF;
END
$$;
