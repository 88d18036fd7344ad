-- Time-ordered group ids (issue #32 item 5, docs/ledger.md "Group ids"): a group id was 96 random
-- bits, so every posting inserted its id at a random place in groups_pkey and its entries'
-- (group_id, entry_no) at a random place in entries_pkey. Once those indexes outgrow the buffer
-- cache (millions of groups), each posting reads index pages from the OS or the disk, and posting
-- slows as history grows. An id now starts with the time it was made: 'lg_', 12 hex digits of
-- Unix milliseconds, 12 hex digits (48 bits) of randomness (the same shape, ledger.group_id, so
-- every id ever issued stays valid). New ids sort after older ones, and both indexes take them at
-- their right edge, whose pages stay cached whatever the history. Ids made in the same
-- millisecond differ by their random part; a collision (one in 2^48 for two groups written in the
-- same millisecond) is refused by groups_pkey like any duplicate, never merged.
-- What an id reveals: the millisecond its group was made, which its created_at already shows.

-- Called once per group on the posting path, so it stays inlinable: plain SQL, no SET clause (it
-- is SECURITY INVOKER, and its callers, post_group and post_groups, fix their own search_path).
CREATE FUNCTION ledger.new_group_id(p_at timestamptz) RETURNS ledger.group_id
LANGUAGE sql VOLATILE AS $$
  SELECT ('lg_' || lpad(to_hex(floor(extract(epoch FROM p_at) * 1000)::bigint), 12, '0')
               -- The first 12 hex digits of a version 4 UUID are random (its version and variant
               -- nibbles come later).
               || left(replace(gen_random_uuid()::text, '-', ''), 12))::ledger.group_id
$$;
REVOKE ALL ON FUNCTION ledger.new_group_id(timestamptz) FROM PUBLIC;

-- write_group (0001) and post_groups (0004) as they were, with the id made by ledger.new_group_id.

CREATE OR REPLACE FUNCTION ledger.write_group(
  p_kind text, p_asset text, p_accounts text[], p_amounts numeric[], p_idempotency_key text,
  p_intent_ref text, p_policy_id text, p_memo text, p_reverses text)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v_count    integer := coalesce(cardinality(p_accounts), 0);
  v_account  text;
  v_amount   numeric;
  v_sum      numeric := 0;
  v_group_id text;
  v_claimed  integer;
BEGIN
  IF p_kind IS NULL OR p_kind NOT IN ('SERVICE_FEE', 'FUNDING', 'SETTLEMENT', 'RECOGNITION', 'REFUND',
                                      'SUSPENSE_MOVE', 'REVERSAL', 'TREASURY_TRANSFER') THEN
    RAISE EXCEPTION 'LEDGER_GROUP_INVALID: unknown group kind %', p_kind USING ERRCODE = 'LG002';
  END IF;
  IF v_count NOT BETWEEN 2 AND 64 OR cardinality(p_amounts) IS DISTINCT FROM v_count THEN
    RAISE EXCEPTION 'LEDGER_GROUP_INVALID: a group has 2 to 64 entries, not %', v_count USING ERRCODE = 'LG002';
  END IF;
  IF p_idempotency_key IS NULL OR char_length(p_idempotency_key) NOT BETWEEN 1 AND 200
     OR p_idempotency_key !~ '^[\x21-\x7e]+$' THEN
    RAISE EXCEPTION 'LEDGER_GROUP_INVALID: the idempotency key is 1 to 200 printable ASCII characters'
      USING ERRCODE = 'LG002';
  END IF;
  IF NOT (char_length(p_intent_ref) IN (27, 66) AND p_intent_ref ~ '^(ci_|0x)[0-9a-f]+$'
          AND (char_length(p_intent_ref) = 27) = (p_intent_ref LIKE 'ci\_%')) THEN
    RAISE EXCEPTION 'LEDGER_GROUP_INVALID: intent ref % is neither ci_<24 hex> nor 0x<64 hex>', p_intent_ref
      USING ERRCODE = 'LG002';
  END IF;
  IF NOT (char_length(p_policy_id) <= 78 AND p_policy_id ~ '^[0-9]+$') THEN
    RAISE EXCEPTION 'LEDGER_GROUP_INVALID: policy id % is not a decimal uint256', p_policy_id USING ERRCODE = 'LG002';
  END IF;
  IF char_length(p_memo) > 500 THEN
    RAISE EXCEPTION 'LEDGER_GROUP_INVALID: the memo is longer than 500 characters' USING ERRCODE = 'LG002';
  END IF;
  FOREACH v_account IN ARRAY p_accounts LOOP
    IF v_account IS NULL
       OR split_part(v_account, ':', 1) NOT IN ('TREASURY', 'USER_OBLIGATION', 'PROVIDER_SETTLEMENT', 'FEE_REVENUE',
                                                'SPREAD_REVENUE', 'COST_OF_GOODS', 'REFUND_PAYABLE',
                                                'CROSS_RAIL_CLEARING', 'SUSPENSE')
       OR v_account <> split_part(v_account, ':', 1) || ':' || p_asset || ':' || split_part(v_account, ':', 4)
       OR char_length(split_part(v_account, ':', 4)) > 128
       OR split_part(v_account, ':', 4) !~ '^[A-Za-z0-9._-]+$' THEN
      RAISE EXCEPTION 'LEDGER_GROUP_INVALID: account % is not KIND:%:ref with a known kind', v_account, p_asset
        USING ERRCODE = 'LG002';
    END IF;
  END LOOP;
  FOREACH v_amount IN ARRAY p_amounts LOOP
    IF v_amount IS NULL OR v_amount = 0 OR v_amount <> trunc(v_amount) THEN
      RAISE EXCEPTION 'LEDGER_GROUP_INVALID: every amount is a non-zero integer, not %', v_amount
        USING ERRCODE = 'LG002';
    END IF;
    v_sum := v_sum + v_amount;
  END LOOP;
  IF v_sum <> 0 THEN
    RAISE EXCEPTION 'LEDGER_GROUP_UNBALANCED: entries sum to %, not 0', v_sum USING ERRCODE = 'LG001';
  END IF;

  v_group_id := ledger.new_group_id(clock_timestamp());

  -- One statement checks the asset, claims the key, creates missing accounts and fills the slots
  -- (each statement costs executor start-up). When nothing was claimed, the slow path says why.
  WITH claimed AS (
    INSERT INTO ledger.groups (group_id, kind, asset, entry_count, idempotency_key, intent_ref, policy_id, reverses, memo)
    SELECT v_group_id, p_kind::ledger.group_kind, p_asset, v_count, p_idempotency_key, p_intent_ref, p_policy_id,
           p_reverses, p_memo
     WHERE EXISTS (SELECT 1 FROM ledger.assets WHERE asset_id = p_asset)
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING group_id
  ), opened AS (
    -- Sorted: postings that open the same new accounts wait for each other in one order, never
    -- in a cycle (a deadlock).
    INSERT INTO ledger.accounts (account_id, kind, asset, ref)
    SELECT DISTINCT a, split_part(a, ':', 1)::ledger.account_kind, p_asset, split_part(a, ':', 4)
      FROM unnest(p_accounts) AS a
     WHERE EXISTS (SELECT 1 FROM claimed)
       AND (SELECT 1 FROM ledger.accounts x WHERE x.account_id = a) IS NULL
     ORDER BY a
    ON CONFLICT (account_id) DO NOTHING
  ), filled AS (
    INSERT INTO ledger.entries (group_id, entry_no, account_id, asset, amount, entry_count)
    SELECT c.group_id, u.n, u.a, p_asset, u.m, v_count
      FROM claimed c, unnest(p_accounts, p_amounts) WITH ORDINALITY AS u(a, m, n)
  )
  SELECT count(*) INTO v_claimed FROM claimed;
  IF v_claimed = 0 THEN
    IF NOT EXISTS (SELECT 1 FROM ledger.assets WHERE asset_id = p_asset) THEN
      RAISE EXCEPTION 'LEDGER_GROUP_INVALID: asset % is not registered', p_asset USING ERRCODE = 'LG002';
    END IF;
    RETURN ledger.replay_group(p_kind, p_asset, p_accounts, p_amounts, p_idempotency_key,
                               p_intent_ref, p_policy_id, p_memo, p_reverses);
  END IF;
  RETURN v_group_id;
END
$$;

CREATE OR REPLACE FUNCTION ledger.post_groups(p_groups jsonb)
RETURNS text[]
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_count    integer;
  v_ids      text[];
  v_claimed  text[];
  v_at       integer;
  v_problem  text;
  v_group    jsonb;
  v_accounts text[];
  v_amounts  numeric[];
BEGIN
  IF jsonb_typeof(p_groups) IS DISTINCT FROM 'array' THEN
    RAISE EXCEPTION 'LEDGER_GROUP_INVALID: groups must be a JSON array' USING ERRCODE = 'LG002';
  END IF;
  v_count := jsonb_array_length(p_groups);
  IF v_count NOT BETWEEN 1 AND 1000 THEN
    RAISE EXCEPTION 'LEDGER_GROUP_INVALID: a batch has 1 to 1000 groups, not %', v_count USING ERRCODE = 'LG002';
  END IF;

  -- One statement checks and writes the whole batch (each statement costs executor start-up, and
  -- values handed from one statement to the next cost a copy and a sort each):
  --   g, e     decode the groups and their entries, with post_group's entry rule and write_group's
  --            account rule (CASE guards every step that could fail on a malformed value);
  --   checked  the first problem of each group, in post_group's order of checks, then whether
  --            the asset is registered;
  --   verdict  the first group's problem, if any: it gates the groups' INSERT, so nothing is
  --            written unless every group passed (then the problem is raised below);
  --   claimed  claims the idempotency keys, in key order;
  --   opened   opens the claimed groups' missing accounts, in account order;
  --   filled   fills their entry slots.
  -- Claims, then accounts, each in one global order, as in post_group: concurrent postings wait
  -- for each other without a cycle (the main query reads "claimed" to its end before the other
  -- parts run). The entry check of 0001 runs once at the end of the statement, over all its
  -- entries; the balance and completeness check once per group at COMMIT.
  WITH g AS MATERIALIZED (
    SELECT x.gno::integer AS gno,
           -- A missing field makes a comparison NULL: coalesce, or NULL would pass every check.
           coalesce(CASE WHEN jsonb_typeof(x.doc) = 'object' THEN
             (x.doc - '{kind,asset,entries,idempotency_key,intent_ref,policy_id,memo}'::text[]) = '{}'::jsonb
             AND jsonb_typeof(x.doc -> 'kind') = 'string'
             AND jsonb_typeof(x.doc -> 'asset') = 'string'
             AND jsonb_typeof(x.doc -> 'idempotency_key') = 'string'
             AND coalesce(jsonb_typeof(x.doc -> 'intent_ref'), 'null') IN ('string', 'null')
             AND coalesce(jsonb_typeof(x.doc -> 'policy_id'), 'null') IN ('string', 'null')
             AND coalesce(jsonb_typeof(x.doc -> 'memo'), 'null') IN ('string', 'null')
           END, false) AS shape_ok,
           x.doc ->> 'kind' AS kind,
           x.doc ->> 'asset' AS asset,
           x.doc -> 'entries' AS entries,
           CASE WHEN jsonb_typeof(x.doc -> 'entries') = 'array' THEN jsonb_array_length(x.doc -> 'entries') END AS size,
           x.doc ->> 'idempotency_key' AS idem,
           x.doc ->> 'intent_ref' AS intent,
           x.doc ->> 'policy_id' AS policy,
           x.doc ->> 'memo' AS memo,
           ledger.new_group_id(clock_timestamp()) AS id
      FROM (SELECT d.doc, d.gno
              FROM jsonb_array_elements(p_groups) WITH ORDINALITY AS d(doc, gno) OFFSET 0) AS x
  ), e AS MATERIALIZED (
    SELECT y.gno, y.id, y.asset, y.i, y.account, y.shape_ok,
           CASE WHEN y.shape_ok THEN (y.ent ->> 'amount')::numeric END AS amount,
           -- write_group's account rule, against the group's asset.
           coalesce(split_part(y.account, ':', 1) IN ('TREASURY', 'USER_OBLIGATION', 'PROVIDER_SETTLEMENT', 'FEE_REVENUE',
                                                      'SPREAD_REVENUE', 'COST_OF_GOODS', 'REFUND_PAYABLE',
                                                      'CROSS_RAIL_CLEARING', 'SUSPENSE')
                    AND y.account = split_part(y.account, ':', 1) || ':' || y.asset || ':' || split_part(y.account, ':', 4)
                    AND char_length(split_part(y.account, ':', 4)) <= 128
                    AND split_part(y.account, ':', 4) ~ '^[A-Za-z0-9._-]+$', false) AS account_ok
      FROM (SELECT z.gno, z.id, z.asset, z.i, z.ent, z.ent ->> 'account' AS account,
                   -- post_group's entry rule (a missing field fails it here, rather than later
                   -- as an account or amount of <NULL>).
                   coalesce(CASE WHEN jsonb_typeof(z.ent) = 'object' THEN
                     (z.ent - '{account,amount}'::text[]) = '{}'::jsonb
                     AND jsonb_typeof(z.ent -> 'account') = 'string'
                     AND jsonb_typeof(z.ent -> 'amount') IN ('string', 'number')
                     AND char_length(z.ent ->> 'amount') <= 79
                     AND (z.ent ->> 'amount') ~ '^-?[1-9][0-9]*$'
                   END, false) AS shape_ok
              -- Entry i of each group (a set-returning function in the select list costs a
              -- fraction of a LATERAL function scan per group). OFFSET 0 keeps each level's
              -- values computed once.
              FROM (SELECT n.gno, n.id, n.asset, n.i, n.entries -> (n.i - 1) AS ent
                      FROM (SELECT g.gno, g.id, g.asset, g.entries, generate_series(1, g.size)::smallint AS i
                              FROM g WHERE g.shape_ok AND g.size <= 64) AS n
                    OFFSET 0) AS z
            OFFSET 0) AS y
  ), s AS (
    SELECT e.gno, min(e.i) FILTER (WHERE NOT e.shape_ok) AS bad_entry,
           min(e.i) FILTER (WHERE NOT e.account_ok) AS bad_account, coalesce(sum(e.amount), 0) AS total
      FROM e GROUP BY e.gno
  ), checked AS (
    SELECT g.gno, CASE
      WHEN NOT g.shape_ok THEN
        'LEDGER_GROUP_INVALID: a group is an object of "kind", "asset", "entries", "idempotency_key" and optionally '
          || '"intent_ref", "policy_id", "memo", with text values'
      WHEN g.kind = 'REVERSAL' THEN 'LEDGER_GROUP_INVALID: a REVERSAL is posted with ledger.reverse_group'
      WHEN g.size IS NULL THEN 'LEDGER_GROUP_INVALID: entries must be a JSON array'
      WHEN g.size > 64 THEN format('LEDGER_GROUP_INVALID: a group has 2 to 64 entries, not %s', g.size)
      WHEN s.bad_entry IS NOT NULL THEN
        format('LEDGER_GROUP_INVALID: entry %s is not {"account": text, "amount": "<non-zero integer>"}', s.bad_entry - 1)
      WHEN g.kind NOT IN ('SERVICE_FEE', 'FUNDING', 'SETTLEMENT', 'RECOGNITION', 'REFUND', 'SUSPENSE_MOVE',
                          'TREASURY_TRANSFER') THEN
        format('LEDGER_GROUP_INVALID: unknown group kind %s', g.kind)
      WHEN g.size < 2 THEN format('LEDGER_GROUP_INVALID: a group has 2 to 64 entries, not %s', g.size)
      WHEN char_length(g.idem) NOT BETWEEN 1 AND 200 OR g.idem !~ '^[\x21-\x7e]+$' THEN
        'LEDGER_GROUP_INVALID: the idempotency key is 1 to 200 printable ASCII characters'
      WHEN NOT (char_length(g.intent) IN (27, 66) AND g.intent ~ '^(ci_|0x)[0-9a-f]+$'
                AND (char_length(g.intent) = 27) = (g.intent LIKE 'ci\_%')) THEN
        format('LEDGER_GROUP_INVALID: intent ref %s is neither ci_<24 hex> nor 0x<64 hex>', g.intent)
      WHEN NOT (char_length(g.policy) <= 78 AND g.policy ~ '^[0-9]+$') THEN
        format('LEDGER_GROUP_INVALID: policy id %s is not a decimal uint256', g.policy)
      WHEN char_length(g.memo) > 500 THEN 'LEDGER_GROUP_INVALID: the memo is longer than 500 characters'
      WHEN s.bad_account IS NOT NULL THEN
        format('LEDGER_GROUP_INVALID: account %s is not KIND:%s:ref with a known kind',
               (SELECT e.account FROM e WHERE e.gno = g.gno AND e.i = s.bad_account), g.asset)
      WHEN s.total <> 0 THEN format('LEDGER_GROUP_UNBALANCED: entries sum to %s, not 0', s.total)
      WHEN NOT EXISTS (SELECT 1 FROM ledger.assets a WHERE a.asset_id = g.asset) THEN
        format('LEDGER_GROUP_INVALID: asset %s is not registered', g.asset)
    END AS problem
      FROM g LEFT JOIN s ON s.gno = g.gno
  ), verdict AS (
    SELECT c.gno, c.problem FROM checked c WHERE c.problem IS NOT NULL ORDER BY c.gno LIMIT 1
  ), claimed AS (
    INSERT INTO ledger.groups (group_id, kind, asset, entry_count, idempotency_key, intent_ref, policy_id, memo)
    SELECT g.id, g.kind::ledger.group_kind, g.asset, g.size, g.idem, g.intent, g.policy, g.memo
      FROM g
     WHERE NOT EXISTS (SELECT 1 FROM verdict)
     ORDER BY g.idem COLLATE "C"
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING group_id
  ), rows AS (
    SELECT e.id, e.i, e.account, e.asset, e.amount, g.size
      FROM claimed c JOIN e ON e.id = c.group_id JOIN g ON g.id = c.group_id
  ), opened AS (
    INSERT INTO ledger.accounts (account_id, kind, asset, ref)
    SELECT d.account, split_part(d.account, ':', 1)::ledger.account_kind, d.asset, split_part(d.account, ':', 4)
      FROM (SELECT DISTINCT r.account, r.asset FROM rows r) d
     WHERE (SELECT 1 FROM ledger.accounts x WHERE x.account_id = d.account) IS NULL
     ORDER BY d.account
    ON CONFLICT (account_id) DO NOTHING
  ), filled AS (
    INSERT INTO ledger.entries (group_id, entry_no, account_id, asset, amount, entry_count)
    SELECT r.id, r.i, r.account, r.asset, r.amount, r.size FROM rows r
  )
  SELECT (SELECT array_agg(c.group_id) FROM claimed c), (SELECT array_agg(g.id ORDER BY g.gno) FROM g),
         (SELECT v.gno FROM verdict v), (SELECT v.problem FROM verdict v)
    INTO v_claimed, v_ids, v_at, v_problem;

  IF v_problem LIKE 'LEDGER_GROUP_UNBALANCED:%' THEN
    RAISE EXCEPTION '% (groups[%])', v_problem, v_at - 1 USING ERRCODE = 'LG001';
  ELSIF v_problem IS NOT NULL THEN
    RAISE EXCEPTION '% (groups[%])', v_problem, v_at - 1 USING ERRCODE = 'LG002';
  END IF;

  -- Keys used before (or twice in this batch): write_group's rule, through replay_group.
  IF coalesce(cardinality(v_claimed), 0) < v_count THEN
    FOR i IN 1 .. v_count LOOP
      CONTINUE WHEN v_ids[i] = ANY (coalesce(v_claimed, '{}'));
      v_group := p_groups -> (i - 1);
      SELECT array_agg(z.ent ->> 'account' ORDER BY z.n), array_agg((z.ent ->> 'amount')::numeric ORDER BY z.n)
        INTO v_accounts, v_amounts
        FROM jsonb_array_elements(v_group -> 'entries') WITH ORDINALITY AS z(ent, n);
      v_ids[i] := ledger.replay_group(v_group ->> 'kind', v_group ->> 'asset', v_accounts, v_amounts,
                                      v_group ->> 'idempotency_key', v_group ->> 'intent_ref',
                                      v_group ->> 'policy_id', v_group ->> 'memo', NULL);
    END LOOP;
  END IF;
  RETURN v_ids;
END
$$;
