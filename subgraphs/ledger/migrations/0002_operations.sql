-- Operator operations on the ledger: float replenishment as a TREASURY_TRANSFER pair, the audit
-- trail of every operator action, and treasury snapshots that compare on-chain floats with the
-- ledger. Snapshots only report drift; nothing here ever corrects a balance.

-- The clearing account on one rail names the other rail as its ref: CAIP-2 with ':' -> '-'.
CREATE FUNCTION ledger.rail_ref(p_chain text) RETURNS text
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT replace(p_chain, ':', '-')
$$;

-- A manual float move between rails (no bridge or swap on the request path): two groups in the
-- caller's transaction, one per asset, each through CROSS_RAIL_CLEARING. The amounts are
-- independent: no price feed balances anything, each asset sums to zero on its own.
CREATE FUNCTION ledger.post_treasury_transfer(
  p_source_asset text, p_source_amount numeric, p_destination_asset text, p_destination_amount numeric,
  p_idempotency_key text, p_memo text DEFAULT NULL)
RETURNS TABLE (source_group_id text, destination_group_id text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_source_chain      text := split_part(p_source_asset, '|', 1);
  v_destination_chain text := split_part(p_destination_asset, '|', 1);
BEGIN
  IF p_source_asset IS NULL OR p_destination_asset IS NULL OR p_source_asset = p_destination_asset THEN
    RAISE EXCEPTION 'LEDGER_GROUP_INVALID: a treasury transfer moves between two different assets'
      USING ERRCODE = 'LG002';
  END IF;
  IF p_source_amount IS NULL OR p_source_amount <= 0 OR p_source_amount <> trunc(p_source_amount)
     OR p_destination_amount IS NULL OR p_destination_amount <= 0 OR p_destination_amount <> trunc(p_destination_amount) THEN
    RAISE EXCEPTION 'LEDGER_GROUP_INVALID: both treasury transfer amounts are positive integers'
      USING ERRCODE = 'LG002';
  END IF;
  IF char_length(p_idempotency_key) > 188 THEN
    RAISE EXCEPTION 'LEDGER_GROUP_INVALID: a treasury transfer key is at most 188 characters' USING ERRCODE = 'LG002';
  END IF;
  source_group_id := ledger.write_group('TREASURY_TRANSFER', p_source_asset,
    ARRAY['CROSS_RAIL_CLEARING:' || p_source_asset || ':' || ledger.rail_ref(v_destination_chain),
          'TREASURY:' || p_source_asset || ':float'],
    ARRAY[p_source_amount, -p_source_amount],
    p_idempotency_key || ':source', NULL, NULL, p_memo, NULL);
  destination_group_id := ledger.write_group('TREASURY_TRANSFER', p_destination_asset,
    ARRAY['TREASURY:' || p_destination_asset || ':float',
          'CROSS_RAIL_CLEARING:' || p_destination_asset || ':' || ledger.rail_ref(v_source_chain)],
    ARRAY[p_destination_amount, -p_destination_amount],
    p_idempotency_key || ':destination', NULL, NULL, p_memo, NULL);
  RETURN NEXT;
END
$$;
REVOKE ALL ON FUNCTION ledger.post_treasury_transfer(text, numeric, text, numeric, text, text) FROM PUBLIC;

-- Who did what to the money, with what outcome. Written in the operation's own transaction on
-- success, and in a separate one on failure, so refused attempts are on record too.
CREATE TABLE ledger.operator_actions (
  action_id      bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  actor          text        NOT NULL,
  action         text        NOT NULL,
  payload        jsonb       NOT NULL,
  result         jsonb       NOT NULL,
  correlation_id text,
  at             timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT operator_actions_actor_length CHECK (char_length(actor) BETWEEN 1 AND 200),
  CONSTRAINT operator_actions_action_known CHECK (action IN ('TREASURY_TRANSFER', 'REVERSE_GROUP')),
  CONSTRAINT operator_actions_result_is_object CHECK (jsonb_typeof(result) = 'object')
);
CREATE INDEX operator_actions_at ON ledger.operator_actions (at);

CREATE TABLE ledger.treasury_snapshots (
  snapshot_id      bigint        GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  asset            text          NOT NULL REFERENCES ledger.assets (asset_id),
  treasury_address text          NOT NULL,
  onchain_balance  numeric(78,0) NOT NULL,
  ledger_balance   numeric(79,0) NOT NULL,
  drift            numeric(80,0) GENERATED ALWAYS AS (onchain_balance - ledger_balance) STORED,
  block_number     numeric(20,0) NOT NULL,
  taken_at         timestamptz   NOT NULL DEFAULT now(),
  CONSTRAINT treasury_snapshots_address_shape CHECK (treasury_address ~ '^0x[0-9a-f]{40}$'),
  CONSTRAINT treasury_snapshots_onchain_nonnegative CHECK (onchain_balance >= 0),
  CONSTRAINT treasury_snapshots_block_nonnegative CHECK (block_number >= 0)
);
CREATE INDEX treasury_snapshots_asset_taken ON ledger.treasury_snapshots (asset, snapshot_id DESC);

DO $$
DECLARE
  v_table text;
BEGIN
  FOREACH v_table IN ARRAY ARRAY['operator_actions', 'treasury_snapshots'] LOOP
    EXECUTE format('CREATE TRIGGER %1$s_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON ledger.%1$s
                      FOR EACH STATEMENT EXECUTE FUNCTION ledger.reject_mutation()', v_table);
    EXECUTE format('ALTER TABLE ledger.%1$s ENABLE ALWAYS TRIGGER %1$s_append_only', v_table);
  END LOOP;
END
$$;

-- The ledger side is read in the same statement that stores the on-chain side, so the pair is
-- one consistent ledger snapshot against one block (postings after that block show up as drift
-- until they confirm, which is why drift is reported, never corrected).
CREATE FUNCTION ledger.record_treasury_snapshot(
  p_asset text, p_treasury_address text, p_onchain_balance numeric, p_block_number numeric)
RETURNS ledger.treasury_snapshots
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_row ledger.treasury_snapshots;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM ledger.assets WHERE asset_id = p_asset) THEN
    RAISE EXCEPTION 'LEDGER_GROUP_INVALID: asset % is not registered', p_asset USING ERRCODE = 'LG002';
  END IF;
  INSERT INTO ledger.treasury_snapshots (asset, treasury_address, onchain_balance, ledger_balance, block_number)
  SELECT p_asset, lower(p_treasury_address), p_onchain_balance, coalesce(sum(e.amount), 0), p_block_number
    FROM ledger.accounts a
    LEFT JOIN ledger.entries e ON e.account_id = a.account_id
   WHERE a.kind = 'TREASURY' AND a.asset = p_asset
  RETURNING * INTO v_row;
  RETURN v_row;
END
$$;
REVOKE ALL ON FUNCTION ledger.record_treasury_snapshot(text, text, numeric, numeric) FROM PUBLIC;

CREATE VIEW ledger.treasury_drift AS
SELECT DISTINCT ON (t.asset)
       t.asset, s.chain, s.token, s.symbol, s.decimals, t.treasury_address, t.onchain_balance,
       t.ledger_balance, t.drift, t.block_number, t.taken_at, t.snapshot_id
  FROM ledger.treasury_snapshots t
  JOIN ledger.assets s ON s.asset_id = t.asset
 ORDER BY t.asset, t.snapshot_id DESC;
