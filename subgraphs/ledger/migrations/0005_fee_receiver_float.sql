-- x402 fees land at the fee receiver's address, not at the treasury key's. They are booked to
-- TREASURY:<asset>:fee-receiver, and a treasury snapshot (the treasury address's on-chain float)
-- compares against TREASURY:<asset>:float only, so fees never show up as drift of the float.
CREATE OR REPLACE FUNCTION ledger.record_treasury_snapshot(
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
   WHERE a.kind = 'TREASURY' AND a.asset = p_asset AND a.ref = 'float'
  RETURNING * INTO v_row;
  RETURN v_row;
END
$$;
REVOKE ALL ON FUNCTION ledger.record_treasury_snapshot(text, text, numeric, numeric) FROM PUBLIC;
