-- The fees of one settlement group booked in one statement. The members of a group settle together
-- and their bookings arrive together; booked one transaction each, that was BEGIN, post_group, the
-- UPDATE and COMMIT per paid call, four round trips each; in one transaction of their own it was
-- still four round trips per group. This is that transaction as one statement (a statement runs in
-- a transaction of its own): every fee's SERVICE_FEE group through post_groups (every rule of
-- post_group, as 0004), then every payment SETTLING → SETTLED with its group, its transaction hash
-- and the settlement time, in the order given. All or nothing: a refused group, or a payment no
-- longer SETTLING, refuses the call and keeps nothing (the caller then books each payment alone,
-- so each gets its own answer). The row triggers of 0003, 0006 and 0008 check every row as they do
-- for the UPDATE alone, and the per-group commit check of 0001 runs at the statement's end.
--
-- p_groups: as post_groups, one SERVICE_FEE group per payment, in the order of p_payment_ids;
-- p_tx_hashes: the transaction (lower-case hex) that paid each. Returns the settled records, in
-- the order given.
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
  WITH settled AS (
    UPDATE ledger.service_payments p
       SET state = 'SETTLED', tx_hash = t.tx_hash, fee_group_id = t.fee_group_id, settled_at = now()
      FROM unnest(p_payment_ids, p_tx_hashes, v_groups) WITH ORDINALITY AS t(payment_id, tx_hash, fee_group_id, position)
     WHERE p.payment_id = t.payment_id AND p.state = 'SETTLING'
    RETURNING p AS payment, t.position
  )
  SELECT array_agg(s.payment ORDER BY s.position)
    INTO v_rows
    FROM settled s;
  IF coalesce(array_length(v_rows, 1), 0) <> v_count THEN
    RAISE EXCEPTION 'settle_service_fees: % of % payments were still SETTLING',
      coalesce(array_length(v_rows, 1), 0), v_count;
  END IF;
  RETURN QUERY SELECT * FROM unnest(v_rows);
END;
$$;

GRANT EXECUTE ON FUNCTION ledger.settle_service_fees(jsonb, text[], text[]) TO spend_control_service;
