-- Balance checkpoints (issue #32 item 5, docs/ledger.md "Balance checkpoints"): every balance was
-- the sum of all of an account's entries (ledger.balance_of, account_balances, kind_balances,
-- trial_balance, the treasury snapshot's ledger side), so a read of a busy account, and every
-- trial balance, cost more the longer the ledger's history. A checkpoint keeps, through one entry
-- seq, each account's balance, entry count and last entry, and each asset's debits, credits and
-- entry count; every balance is now that checkpoint plus the entries after it, read through the
-- (account_id, seq) and seq indexes. It is also the period close that archiving old entries by
-- partition needs first (docs/operations.md "Partitioning the append-only tables").
--
-- Exactness: a checkpoint through seq N must hold every entry with seq <= N, and an entry commits
-- in its own time, so a transaction still open may hold a seq below the highest one visible. The
-- horizon is therefore marked first, alone: ledger.mark_checkpoint_horizon() takes a SHARE lock on
-- ledger.entries, which is granted only once every transaction inserting entries has ended (each
-- holds ROW EXCLUSIVE), and reads the highest seq then; any insert after it draws a higher seq from
-- the identity (which hands them out one at a time, CACHE 1; the mark refuses otherwise). The lock is released as the statement ends (an insert arriving meanwhile waits for
-- it, a few milliseconds; the lock is not waited for past p_lock_timeout_ms, and the caller tries
-- again later). ledger.advance_balance_checkpoint() then adds the entries in (through, horizon]
-- to the checkpoint, with no lock on entries, in one transaction with the new `through_seq`.
-- The checkpoint rows are written only by these functions (the service role reads them).

CREATE TABLE ledger.balance_checkpoint (
  one          boolean      PRIMARY KEY DEFAULT true CHECK (one),
  -- Every entry with seq <= through_seq is in the checkpoint rows; none after it.
  through_seq  bigint       NOT NULL CHECK (through_seq >= 0),
  taken_at     timestamptz  NOT NULL DEFAULT now()
);
INSERT INTO ledger.balance_checkpoint (through_seq) VALUES (0);

-- The highest seq below which no transaction inserting entries was still open (marked under lock).
CREATE TABLE ledger.checkpoint_horizon (
  one        boolean      PRIMARY KEY DEFAULT true CHECK (one),
  seq        bigint       NOT NULL CHECK (seq >= 0),
  marked_at  timestamptz  NOT NULL DEFAULT now()
);
INSERT INTO ledger.checkpoint_horizon (seq) VALUES (0);

CREATE TABLE ledger.account_checkpoints (
  account_id      text     PRIMARY KEY REFERENCES ledger.accounts (account_id),
  balance         numeric  NOT NULL,
  entry_count     bigint   NOT NULL CHECK (entry_count > 0),
  last_entry_seq  bigint   NOT NULL CHECK (last_entry_seq > 0)
);

CREATE TABLE ledger.asset_checkpoints (
  asset        text     PRIMARY KEY REFERENCES ledger.assets (asset_id),
  debits       numeric  NOT NULL CHECK (debits >= 0),
  credits      numeric  NOT NULL CHECK (credits >= 0),
  entry_count  bigint   NOT NULL CHECK (entry_count > 0)
);

REVOKE ALL ON ledger.balance_checkpoint, ledger.checkpoint_horizon, ledger.account_checkpoints,
              ledger.asset_checkpoints FROM spend_control_service;
GRANT SELECT ON ledger.balance_checkpoint, ledger.checkpoint_horizon, ledger.account_checkpoints,
                ledger.asset_checkpoints TO spend_control_service;

-- Marks the horizon: the highest entry seq once no transaction inserting entries is open. Null,
-- with nothing changed, when the lock was not granted within p_lock_timeout_ms. Call it alone, as
-- a statement of its own: the lock lasts until the caller's transaction ends.
CREATE FUNCTION ledger.mark_checkpoint_horizon(p_lock_timeout_ms integer DEFAULT 50) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_seq     bigint;
  v_timeout text := current_setting('lock_timeout');
BEGIN
  IF p_lock_timeout_ms IS NULL OR p_lock_timeout_ms < 1 OR p_lock_timeout_ms > 10000 THEN
    RAISE EXCEPTION 'mark_checkpoint_horizon: a lock timeout of 1 to 10000 ms' USING ERRCODE = '22023';
  END IF;
  -- The horizon holds only if the identity hands out seqs in the order inserts draw them: one
  -- at a time (CACHE 1). A cache gives each session its own range, so a later insert could draw a
  -- lower seq than one already marked.
  IF (SELECT s.seqcache FROM pg_catalog.pg_sequence s
       WHERE s.seqrelid = 'ledger.entries_seq_seq'::regclass) <> 1 THEN
    RAISE EXCEPTION 'mark_checkpoint_horizon: ledger.entries_seq_seq must have CACHE 1' USING ERRCODE = '55000';
  END IF;
  PERFORM set_config('lock_timeout', p_lock_timeout_ms::text, true);
  BEGIN
    LOCK TABLE ledger.entries IN SHARE MODE;
  EXCEPTION WHEN lock_not_available THEN
    PERFORM set_config('lock_timeout', v_timeout, true);
    RETURN NULL;
  END;
  PERFORM set_config('lock_timeout', v_timeout, true);
  SELECT coalesce(max(seq), 0) INTO v_seq FROM ledger.entries;
  UPDATE ledger.checkpoint_horizon SET seq = greatest(seq, v_seq), marked_at = now()
  RETURNING seq INTO v_seq;
  RETURN v_seq;
END
$$;

-- Adds the entries in (through_seq, horizon] to the checkpoint; returns the new through_seq
-- (unchanged when the horizon has not moved). Two callers at once take turns on the checkpoint row.
CREATE FUNCTION ledger.advance_balance_checkpoint() RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_from bigint;
  v_to   bigint;
BEGIN
  SELECT through_seq INTO v_from FROM ledger.balance_checkpoint FOR UPDATE;
  SELECT seq INTO v_to FROM ledger.checkpoint_horizon;
  IF v_to <= v_from THEN
    RETURN v_from;
  END IF;
  INSERT INTO ledger.account_checkpoints AS c (account_id, balance, entry_count, last_entry_seq)
  SELECT e.account_id, sum(e.amount::numeric), count(*), max(e.seq)
    FROM ledger.entries e
   WHERE e.seq > v_from AND e.seq <= v_to
   GROUP BY e.account_id
  ON CONFLICT (account_id) DO UPDATE
     SET balance = c.balance + EXCLUDED.balance,
         entry_count = c.entry_count + EXCLUDED.entry_count,
         last_entry_seq = EXCLUDED.last_entry_seq;
  INSERT INTO ledger.asset_checkpoints AS c (asset, debits, credits, entry_count)
  SELECT e.asset,
         coalesce(sum(e.amount::numeric) FILTER (WHERE e.amount::numeric > 0), 0),
         coalesce(-sum(e.amount::numeric) FILTER (WHERE e.amount::numeric < 0), 0),
         count(*)
    FROM ledger.entries e
   WHERE e.seq > v_from AND e.seq <= v_to
   GROUP BY e.asset
  ON CONFLICT (asset) DO UPDATE
     SET debits = c.debits + EXCLUDED.debits,
         credits = c.credits + EXCLUDED.credits,
         entry_count = c.entry_count + EXCLUDED.entry_count;
  UPDATE ledger.balance_checkpoint SET through_seq = v_to, taken_at = now();
  RETURN v_to;
END
$$;

-- The entries after the checkpoint, for the reads that scan them all (kind_balances,
-- trial_balance). Planned at each call with the checkpoint's seq as a value, so the planner sees how
-- few entries lie past it and reads them through the seq index, however long the history (a view
-- joining the checkpoint row would leave the planner guessing a third of the table). STABLE: it
-- reads with its caller's snapshot, so the checkpoint and the entries after it are one moment.
CREATE FUNCTION ledger.entries_since_checkpoint() RETURNS SETOF ledger.entries
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_custom_plan
ROWS 1000 AS $$
DECLARE
  v_through bigint := (SELECT k.through_seq FROM ledger.balance_checkpoint k);
BEGIN
  RETURN QUERY SELECT * FROM ledger.entries e WHERE e.seq > v_through;
END
$$;

-- Every balance: the checkpoint plus the entries after it (one statement, so one snapshot of both).
CREATE OR REPLACE FUNCTION ledger.balance_of(p_account_id text) RETURNS numeric
LANGUAGE sql STABLE AS $$
  SELECT coalesce((SELECT c.balance FROM ledger.account_checkpoints c WHERE c.account_id = p_account_id), 0)
       + coalesce((SELECT sum(e.amount) FROM ledger.entries e
                    WHERE e.account_id = p_account_id
                      AND e.seq > (SELECT k.through_seq FROM ledger.balance_checkpoint k)), 0)
$$;

-- Per account: the (account_id, seq) index gives its entries after the checkpoint.
CREATE OR REPLACE VIEW ledger.account_balances AS
 SELECT a.account_id,
    a.kind,
    a.asset,
    s.chain,
    s.token,
    s.symbol,
    s.decimals,
    a.ref,
    a.created_at,
    COALESCE(c.balance, 0) + COALESCE(b.balance, 0) AS balance,
    COALESCE(c.entry_count, 0) + b.entry_count AS entry_count,
    COALESCE(b.last_entry_seq, c.last_entry_seq) AS last_entry_seq
   FROM ledger.accounts a
     JOIN ledger.assets s ON s.asset_id = a.asset
     LEFT JOIN ledger.account_checkpoints c ON c.account_id = a.account_id
     CROSS JOIN LATERAL ( SELECT sum(e.amount::numeric) AS balance,
            count(*) AS entry_count,
            max(e.seq) AS last_entry_seq
           FROM ledger.entries e
          WHERE e.account_id = a.account_id
            AND e.seq > (SELECT k.through_seq FROM ledger.balance_checkpoint k)) b;

CREATE OR REPLACE VIEW ledger.kind_balances AS
 SELECT a.asset,
    a.kind,
    sum(x.amount) AS balance,
    sum(x.entries)::bigint AS entry_count
   FROM ( SELECT c.account_id, c.balance AS amount, c.entry_count AS entries
            FROM ledger.account_checkpoints c
          UNION ALL
          SELECT e.account_id, e.amount::numeric, 1
            FROM ledger.entries_since_checkpoint() e) x
     JOIN ledger.accounts a ON a.account_id = x.account_id
  GROUP BY a.asset, a.kind;

CREATE OR REPLACE VIEW ledger.trial_balance AS
 SELECT s.asset_id AS asset,
    s.chain,
    s.token,
    s.symbol,
    s.decimals,
    COALESCE(c.debits, 0) + COALESCE(d.debits, 0) AS debits,
    COALESCE(c.credits, 0) + COALESCE(d.credits, 0) AS credits,
    COALESCE(c.debits, 0) - COALESCE(c.credits, 0) + COALESCE(d.net, 0) AS net,
    COALESCE(c.entry_count, 0) + COALESCE(d.entry_count, 0) AS entry_count
   FROM ledger.assets s
     LEFT JOIN ledger.asset_checkpoints c ON c.asset = s.asset_id
     LEFT JOIN ( SELECT e.asset,
            sum(e.amount::numeric) FILTER (WHERE e.amount::numeric > 0) AS debits,
            - sum(e.amount::numeric) FILTER (WHERE e.amount::numeric < 0) AS credits,
            sum(e.amount::numeric) AS net,
            count(e.seq) AS entry_count
           FROM ledger.entries_since_checkpoint() e
          GROUP BY e.asset) d ON d.asset = s.asset_id;

-- The treasury snapshot's ledger side: the float account's balance, as balance_of reads it.
CREATE OR REPLACE FUNCTION ledger.record_treasury_snapshot(p_asset text, p_treasury_address text,
  p_onchain_balance numeric, p_block_number numeric) RETURNS ledger.treasury_snapshots
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_row ledger.treasury_snapshots;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM ledger.assets WHERE asset_id = p_asset) THEN
    RAISE EXCEPTION 'LEDGER_GROUP_INVALID: asset % is not registered', p_asset USING ERRCODE = 'LG002';
  END IF;
  INSERT INTO ledger.treasury_snapshots (asset, treasury_address, onchain_balance, ledger_balance, block_number)
  SELECT p_asset, lower(p_treasury_address), p_onchain_balance,
         coalesce(sum(ledger.balance_of(a.account_id)), 0), p_block_number
    FROM ledger.accounts a
   WHERE a.kind = 'TREASURY' AND a.asset = p_asset AND a.ref = 'float'
  RETURNING * INTO v_row;
  RETURN v_row;
END
$$;

GRANT EXECUTE ON FUNCTION ledger.mark_checkpoint_horizon(integer), ledger.advance_balance_checkpoint(),
  ledger.entries_since_checkpoint() TO spend_control_service;
-- The planner's row counts for the one-row tables (never analyzed, it would guess 1,810 rows each).
ANALYZE ledger.balance_checkpoint, ledger.checkpoint_horizon;
