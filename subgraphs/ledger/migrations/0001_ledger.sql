-- The ledger: double-entry, append-only, single-asset groups that sum to zero. Every invariant the
-- money depends on is enforced here, for every role including the table owner; the TypeScript
-- wrapper only converts types. Limits: 2..64 entries per group, |amount| < 10^78, refs <= 128 chars.

CREATE SCHEMA ledger;

-- ---------------------------------------------------------------------------------------------
-- Types. Kinds are enums and identifiers are domains rather than table CHECKs: PostgreSQL
-- re-reads a table's CHECK expressions on every INSERT statement, while enum and domain checks
-- are prepared once per session, and every posting is an INSERT statement. Regexes avoid bounded
-- repetition: '^[...]{1,200}$' took ~200 µs per match here, '^[...]+$' plus a length check ~1 µs.
-- ---------------------------------------------------------------------------------------------

CREATE TYPE ledger.account_kind AS ENUM (
  'TREASURY', 'USER_OBLIGATION', 'PROVIDER_SETTLEMENT', 'FEE_REVENUE', 'SPREAD_REVENUE',
  'COST_OF_GOODS', 'REFUND_PAYABLE', 'CROSS_RAIL_CLEARING', 'SUSPENSE');

CREATE TYPE ledger.group_kind AS ENUM (
  'SERVICE_FEE', 'FUNDING', 'SETTLEMENT', 'RECOGNITION', 'REFUND', 'SUSPENSE_MOVE', 'REVERSAL',
  'TREASURY_TRANSFER');

CREATE DOMAIN ledger.group_id AS text
  CHECK (char_length(VALUE) = 27 AND VALUE ~ '^lg_[0-9a-f]+$');

-- Callers choose keys that name the business fact ("fee:<payer>:<nonce>", "funding:<intent>").
CREATE DOMAIN ledger.idempotency_key AS text
  CHECK (char_length(VALUE) BETWEEN 1 AND 200 AND VALUE ~ '^[\x21-\x7e]+$');

-- A consumer intent id (ci_ + 24 hex) or a SpendIntent hash (0x + 64 hex).
CREATE DOMAIN ledger.intent_ref AS text
  CHECK (char_length(VALUE) IN (27, 66) AND VALUE ~ '^(ci_|0x)[0-9a-f]+$'
         AND (char_length(VALUE) = 27) = (VALUE LIKE 'ci\_%'));

-- A decimal uint256, as the policy subgraph spells policy ids.
CREATE DOMAIN ledger.policy_id AS text
  CHECK (char_length(VALUE) <= 78 AND VALUE ~ '^[0-9]+$');

-- + debit, - credit, in atomic units of the asset; never 0. A domain, not a table CHECK, for the
-- reason above; the constraint keeps the name a table CHECK would have.
CREATE DOMAIN ledger.amount AS numeric(78,0)
  CONSTRAINT entries_amount_nonzero CHECK (VALUE <> 0);

-- ---------------------------------------------------------------------------------------------
-- Tables
-- ---------------------------------------------------------------------------------------------

CREATE TABLE ledger.assets (
  asset_id   text        PRIMARY KEY,
  chain      text        NOT NULL,
  token      text        NOT NULL,
  symbol     text        NOT NULL,
  decimals   smallint    NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT assets_id_is_chain_and_token CHECK (asset_id = chain || '|' || token),
  CONSTRAINT assets_chain_is_caip2 CHECK (char_length(chain) <= 41 AND chain ~ '^[-a-z0-9]+:[-_a-zA-Z0-9]+$'
                                          AND char_length(split_part(chain, ':', 1)) BETWEEN 3 AND 8),
  CONSTRAINT assets_token_shape CHECK (char_length(token) <= 128 AND token ~ '^[-.%a-zA-Z0-9]+$'),
  -- One spelling per EVM token, or the same money would split over two assets.
  CONSTRAINT assets_evm_token_lowercase CHECK (chain NOT LIKE 'eip155:%' OR (char_length(token) = 42 AND token ~ '^0x[0-9a-f]+$')),
  CONSTRAINT assets_symbol_shape CHECK (char_length(symbol) <= 16 AND symbol ~ '^[^[:space:]]+$'),
  CONSTRAINT assets_decimals_range CHECK (decimals BETWEEN 0 AND 36)
);

CREATE TABLE ledger.accounts (
  account_id text        PRIMARY KEY,
  kind       ledger.account_kind NOT NULL,
  asset      text        NOT NULL REFERENCES ledger.assets (asset_id),
  ref        text        NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT accounts_ref_shape CHECK (char_length(ref) <= 128 AND ref ~ '^[A-Za-z0-9._-]+$'),
  CONSTRAINT accounts_id_is_kind_asset_ref CHECK (account_id = kind::text || ':' || asset || ':' || ref)
);

CREATE TABLE ledger.groups (
  group_id        ledger.group_id PRIMARY KEY,
  -- Cursor order. Not a commit order: a row that commits late may carry a smaller seq, which
  -- pagination tolerates because it only promises stability for rows that already existed.
  seq             bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
  kind            ledger.group_kind NOT NULL,
  -- No foreign key to assets on purpose: it would take a KEY SHARE lock on one hot asset row per
  -- posting. entries_belong_to_group proves every entry's account exists and is of this asset,
  -- and accounts reference assets.
  asset           text        NOT NULL,
  -- Declared up front so entries fill numbered slots: once committed, a group has no free slot,
  -- so no later transaction can append to it (see entries_slot_in_range).
  entry_count     smallint    NOT NULL,
  idempotency_key ledger.idempotency_key NOT NULL,
  intent_ref      ledger.intent_ref,
  policy_id       ledger.policy_id,
  reverses        ledger.group_id REFERENCES ledger.groups (group_id),
  memo            text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT groups_entry_count_range CHECK (entry_count BETWEEN 2 AND 64),
  CONSTRAINT groups_memo_length CHECK (char_length(memo) <= 500),
  CONSTRAINT groups_reversal_points_back CHECK ((kind = 'REVERSAL') = (reverses IS NOT NULL)),
  CONSTRAINT groups_idempotency_key_key UNIQUE (idempotency_key)
);
-- A group is reversed at most once (partial: most groups reverse nothing).
CREATE UNIQUE INDEX groups_reverses_once ON ledger.groups (reverses) WHERE reverses IS NOT NULL;
CREATE INDEX groups_intent_ref_seq ON ledger.groups (intent_ref, seq) WHERE intent_ref IS NOT NULL;
CREATE INDEX groups_policy_id_seq ON ledger.groups (policy_id, seq) WHERE policy_id IS NOT NULL;
-- BRIN: created_at grows with the heap, so a block-range index serves time ranges at almost no
-- cost per insert (a btree here would be one more tree to descend on every posting).
CREATE INDEX groups_created_at ON ledger.groups USING brin (created_at);

CREATE TABLE ledger.entries (
  group_id    text          NOT NULL,
  entry_no    smallint      NOT NULL,
  seq         bigint        GENERATED ALWAYS AS IDENTITY UNIQUE,
  account_id  text          NOT NULL,
  asset       text          NOT NULL,
  -- + debit, - credit, in atomic units of the asset; never 0 (CHECK entries_amount_nonzero).
  amount      ledger.amount NOT NULL,
  -- Must equal the group's; with entry_no it places the entry in one of the group's slots.
  entry_count smallint      NOT NULL,
  PRIMARY KEY (group_id, entry_no)
  -- The rules tying an entry to its group, its slot and its account are checked once per INSERT
  -- statement by entries_belong_to_group below (a foreign key here cost one SPI query and one
  -- WAL-logged row lock on the group per entry, and table CHECKs are re-read per statement).
);
CREATE INDEX entries_account_seq ON ledger.entries (account_id, seq);

-- ---------------------------------------------------------------------------------------------
-- Guards: append-only for every role. Statement-level, so even an UPDATE that matches no row is
-- refused, and ENABLE ALWAYS, so session_replication_role = replica does not silence them.
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION ledger.reject_mutation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'LEDGER_APPEND_ONLY: % on %.% is refused; post a reversing group instead',
    TG_OP, TG_TABLE_SCHEMA, TG_TABLE_NAME
    USING ERRCODE = 'LG006';
END
$$;

DO $$
DECLARE
  v_table text;
BEGIN
  FOREACH v_table IN ARRAY ARRAY['assets', 'accounts', 'groups', 'entries'] LOOP
    EXECUTE format('CREATE TRIGGER %1$s_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON ledger.%1$s
                      FOR EACH STATEMENT EXECUTE FUNCTION ledger.reject_mutation()', v_table);
    EXECUTE format('ALTER TABLE ledger.%1$s ENABLE ALWAYS TRIGGER %1$s_append_only', v_table);
  END LOOP;
END
$$;

-- Once per INSERT statement on entries (any statement: the posting functions, a direct INSERT,
-- COPY), over the statement's new rows, at the end of the statement, so the group and accounts
-- written earlier in the same statement are visible. Each entry must:
--   entries_account_asset_matches  name its own asset in its account id (KIND:chain|token:ref,
--                                  a CAIP-2 chain holds one colon);
--   entries_slot_in_range          fill a slot 1..entry_count;
--   entries_group_fkey             belong to a visible group of the same asset and entry_count
--                                  (so no group mixes assets, and the slots are the group's);
--   (LG002)                        post to an account that exists (accounts are append-only, so
--                                  one that exists now exists at COMMIT).
-- The SQLSTATEs and constraint names are those the equivalent table constraints would raise.
-- Scalar subqueries, not joins: each is one index probe per entry whatever the table sizes.
CREATE FUNCTION ledger.assert_entries_belong() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_bad_asset   text;
  v_bad_slot    text;
  v_bad_group   text;
  v_bad_account text;
BEGIN
  SELECT min(n.account_id) FILTER (WHERE split_part(n.account_id, ':', 2) || ':' || split_part(n.account_id, ':', 3)
                                         IS DISTINCT FROM n.asset),
         min(n.group_id) FILTER (WHERE n.entry_no NOT BETWEEN 1 AND n.entry_count),
         min(n.group_id) FILTER (WHERE (SELECT g.asset = n.asset AND g.entry_count = n.entry_count
                                          FROM ledger.groups g WHERE g.group_id = n.group_id) IS NOT TRUE),
         min(n.account_id) FILTER (WHERE (SELECT true FROM ledger.accounts a WHERE a.account_id = n.account_id) IS NULL)
    INTO v_bad_asset, v_bad_slot, v_bad_group, v_bad_account
    FROM new_entries n;
  IF v_bad_asset IS NOT NULL THEN
    RAISE EXCEPTION 'new row for relation "entries" violates check constraint "entries_account_asset_matches": account % is not of the entry''s asset', v_bad_asset
      USING ERRCODE = 'check_violation', SCHEMA = 'ledger', TABLE = 'entries', CONSTRAINT = 'entries_account_asset_matches';
  END IF;
  IF v_bad_slot IS NOT NULL THEN
    RAISE EXCEPTION 'new row for relation "entries" violates check constraint "entries_slot_in_range": an entry of group % is outside its slots', v_bad_slot
      USING ERRCODE = 'check_violation', SCHEMA = 'ledger', TABLE = 'entries', CONSTRAINT = 'entries_slot_in_range';
  END IF;
  IF v_bad_group IS NOT NULL THEN
    RAISE EXCEPTION 'insert or update on table "entries" violates foreign key constraint "entries_group_fkey": no group % of this asset and entry count', v_bad_group
      USING ERRCODE = 'foreign_key_violation', SCHEMA = 'ledger', TABLE = 'entries', CONSTRAINT = 'entries_group_fkey';
  END IF;
  IF v_bad_account IS NOT NULL THEN
    RAISE EXCEPTION 'LEDGER_GROUP_INVALID: account % does not exist', v_bad_account USING ERRCODE = 'LG002';
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER entries_belong_to_group
  AFTER INSERT ON ledger.entries
  REFERENCING NEW TABLE AS new_entries
  FOR EACH STATEMENT EXECUTE FUNCTION ledger.assert_entries_belong();
ALTER TABLE ledger.entries ENABLE ALWAYS TRIGGER entries_belong_to_group;

-- Runs once per group at COMMIT (not once per entry): every declared slot is filled (entries
-- are unique per slot and, by the trigger above, inside 1..entry_count, so the count proves it)
-- and the amounts sum to zero. One index range scan over the group's own slots.
CREATE FUNCTION ledger.assert_group_complete() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_entries integer;
  v_sum     numeric;
BEGIN
  SELECT count(*), coalesce(sum(e.amount), 0) INTO v_entries, v_sum
    FROM ledger.entries e
   WHERE e.group_id = NEW.group_id;
  IF v_entries <> NEW.entry_count THEN
    RAISE EXCEPTION 'LEDGER_GROUP_UNBALANCED: group % has % of % declared entries',
      NEW.group_id, v_entries, NEW.entry_count USING ERRCODE = 'LG001';
  END IF;
  IF v_sum <> 0 THEN
    RAISE EXCEPTION 'LEDGER_GROUP_UNBALANCED: group % sums to %, not 0', NEW.group_id, v_sum
      USING ERRCODE = 'LG001';
  END IF;
  RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER groups_complete_at_commit
  AFTER INSERT ON ledger.groups
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION ledger.assert_group_complete();
ALTER TABLE ledger.groups ENABLE ALWAYS TRIGGER groups_complete_at_commit;

-- ---------------------------------------------------------------------------------------------
-- Write functions. SECURITY DEFINER so other subgraphs need EXECUTE only, never INSERT: money is
-- posted only through these. search_path is pinned because they run with the owner's rights.
-- Errors carry SQLSTATE LG001..LG005 and start with the error code (see docs/ledger.md).
-- force_generic_plan: array parameters make every custom plan look cheaper than the generic
-- one, so without it each posting would be planned from scratch (a quarter of its CPU).
-- ---------------------------------------------------------------------------------------------

CREATE FUNCTION ledger.register_asset(p_chain text, p_token text, p_symbol text, p_decimals integer)
RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_asset_id text := p_chain || '|' || p_token;
  v_existing ledger.assets;
BEGIN
  INSERT INTO ledger.assets (asset_id, chain, token, symbol, decimals)
  VALUES (v_asset_id, p_chain, p_token, p_symbol, p_decimals)
  ON CONFLICT (asset_id) DO NOTHING;
  IF NOT FOUND THEN
    SELECT * INTO v_existing FROM ledger.assets WHERE asset_id = v_asset_id;
    IF v_existing.symbol <> p_symbol OR v_existing.decimals <> p_decimals THEN
      RAISE EXCEPTION 'LEDGER_IDEMPOTENCY_CONFLICT: asset % is registered as % with % decimals',
        v_asset_id, v_existing.symbol, v_existing.decimals USING ERRCODE = 'LG005';
    END IF;
  END IF;
  RETURN v_asset_id;
END
$$;

-- A retried posting with the same key returns the first group; the same key with any other
-- payload is a conflict. Entries compare as a multiset, so their order does not matter.
CREATE FUNCTION ledger.replay_group(
  p_kind text, p_asset text, p_accounts text[], p_amounts numeric[], p_idempotency_key text,
  p_intent_ref text, p_policy_id text, p_memo text, p_reverses text)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v_first ledger.groups;
BEGIN
  SELECT * INTO v_first FROM ledger.groups WHERE idempotency_key = p_idempotency_key;
  IF NOT FOUND THEN
    -- Only under REPEATABLE READ or SERIALIZABLE: the first posting committed after this
    -- transaction's snapshot was taken. A retry of the whole transaction will see it.
    RAISE EXCEPTION 'could not serialize: idempotency key % was used by a concurrent transaction',
      p_idempotency_key USING ERRCODE = '40001';
  END IF;
  IF v_first.kind::text IS DISTINCT FROM p_kind
     OR v_first.asset IS DISTINCT FROM p_asset
     OR v_first.intent_ref IS DISTINCT FROM p_intent_ref
     OR v_first.policy_id IS DISTINCT FROM p_policy_id
     OR v_first.memo IS DISTINCT FROM p_memo
     OR v_first.reverses IS DISTINCT FROM p_reverses
     OR (SELECT array_agg(e.account_id || ' ' || e.amount::text ORDER BY e.account_id, e.amount)
           FROM ledger.entries e WHERE e.group_id = v_first.group_id)
        IS DISTINCT FROM
        (SELECT array_agg(u.a || ' ' || u.m::text ORDER BY u.a, u.m)
           FROM unnest(p_accounts, p_amounts) AS u(a, m))
  THEN
    RAISE EXCEPTION 'LEDGER_IDEMPOTENCY_CONFLICT: idempotency key % already posted group % with a different payload',
      p_idempotency_key, v_first.group_id USING ERRCODE = 'LG005';
  END IF;
  RETURN v_first.group_id;
END
$$;

-- The one write path for groups. Validates with precise errors (the table rules would refuse the
-- same rows, with worse messages), claims the idempotency key, creates accounts on first use and
-- fills the entry slots. The balance is proven again at COMMIT by the constraint trigger.
-- Hot path: per-entry rules are plain PL/pgSQL expressions (no executor start-up per check), and
-- all writes are one statement. Internal: called by the SECURITY DEFINER functions, whose pinned
-- search_path it inherits.
CREATE FUNCTION ledger.write_group(
  p_kind text, p_asset text, p_accounts text[], p_amounts numeric[], p_idempotency_key text,
  p_intent_ref text, p_policy_id text, p_memo text, p_reverses text)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v_count    integer := coalesce(cardinality(p_accounts), 0);
  v_account  text;
  v_amount   numeric;
  v_sum      numeric := 0;
  v_hex      text;
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

  -- 96 random bits from the built-in UUID generator (no extension needed): the version nibble
  -- (13th hex digit) and the variant nibble (17th) are not random, so they are skipped.
  v_hex := replace(gen_random_uuid()::text, '-', '');
  v_group_id := 'lg_' || substr(v_hex, 1, 12) || substr(v_hex, 14, 3) || substr(v_hex, 18, 9);

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

-- p_entries: [{"account": "KIND:chain|token:ref", "amount": "-50000"}, ...], amounts as decimal
-- strings (integral JSON numbers are accepted too; jsonb keeps them exact).
CREATE FUNCTION ledger.post_group(
  p_kind text, p_asset text, p_entries jsonb, p_idempotency_key text,
  p_intent_ref text DEFAULT NULL, p_policy_id text DEFAULT NULL, p_memo text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_count    integer;
  v_entry    jsonb;
  v_accounts text[] := '{}';
  v_amounts  numeric[] := '{}';
BEGIN
  IF p_kind = 'REVERSAL' THEN
    RAISE EXCEPTION 'LEDGER_GROUP_INVALID: a REVERSAL is posted with ledger.reverse_group' USING ERRCODE = 'LG002';
  END IF;
  IF jsonb_typeof(p_entries) IS DISTINCT FROM 'array' THEN
    RAISE EXCEPTION 'LEDGER_GROUP_INVALID: entries must be a JSON array' USING ERRCODE = 'LG002';
  END IF;
  v_count := jsonb_array_length(p_entries);
  IF v_count > 64 THEN
    RAISE EXCEPTION 'LEDGER_GROUP_INVALID: a group has 2 to 64 entries, not %', v_count USING ERRCODE = 'LG002';
  END IF;
  FOR i IN 0 .. v_count - 1 LOOP
    v_entry := p_entries -> i;
    IF NOT (jsonb_typeof(v_entry) = 'object'
            AND (v_entry - 'account' - 'amount') = '{}'::jsonb
            AND jsonb_typeof(v_entry -> 'account') = 'string'
            AND jsonb_typeof(v_entry -> 'amount') IN ('string', 'number')
            AND char_length(v_entry ->> 'amount') <= 79
            AND (v_entry ->> 'amount') ~ '^-?[1-9][0-9]*$') THEN
      RAISE EXCEPTION 'LEDGER_GROUP_INVALID: entry % is not {"account": text, "amount": "<non-zero integer>"}', i
        USING ERRCODE = 'LG002';
    END IF;
    v_accounts := v_accounts || (v_entry ->> 'account');
    v_amounts := v_amounts || (v_entry ->> 'amount')::numeric;
  END LOOP;
  RETURN ledger.write_group(p_kind, p_asset, v_accounts, v_amounts, p_idempotency_key,
                            p_intent_ref, p_policy_id, p_memo, NULL);
END
$$;

-- A correction: a REVERSAL group negating every entry of the original and pointing at it. The
-- original stays; the reversal carries its intent and policy so owners see both.
CREATE FUNCTION ledger.reverse_group(p_group_id text, p_reason text, p_idempotency_key text)
RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_original   ledger.groups;
  v_prior      ledger.groups;
  v_accounts   text[];
  v_amounts    numeric[];
  v_constraint text;
BEGIN
  IF p_reason IS NULL OR char_length(btrim(p_reason)) = 0 OR char_length(p_reason) > 500 THEN
    RAISE EXCEPTION 'LEDGER_GROUP_INVALID: a reversal needs a reason of 1 to 500 characters' USING ERRCODE = 'LG002';
  END IF;
  SELECT * INTO v_original FROM ledger.groups WHERE group_id = p_group_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'LEDGER_GROUP_NOT_FOUND: no ledger group %', p_group_id USING ERRCODE = 'LG003';
  END IF;
  SELECT * INTO v_prior FROM ledger.groups WHERE reverses = p_group_id;
  IF FOUND AND v_prior.idempotency_key <> p_idempotency_key THEN
    RAISE EXCEPTION 'LEDGER_ALREADY_REVERSED: group % was reversed by %', p_group_id, v_prior.group_id
      USING ERRCODE = 'LG004';
  END IF;

  SELECT array_agg(e.account_id ORDER BY e.entry_no), array_agg(-e.amount ORDER BY e.entry_no)
    INTO v_accounts, v_amounts
    FROM ledger.entries e WHERE e.group_id = p_group_id;
  BEGIN
    RETURN ledger.write_group('REVERSAL', v_original.asset, v_accounts, v_amounts, p_idempotency_key,
                              v_original.intent_ref, v_original.policy_id, p_reason, p_group_id);
  EXCEPTION WHEN unique_violation THEN
    GET STACKED DIAGNOSTICS v_constraint = CONSTRAINT_NAME;
    IF v_constraint <> 'groups_reverses_once' THEN
      RAISE;
    END IF;
    -- The concurrent winner may be this very request, retried: then it is a replay.
    IF EXISTS (SELECT 1 FROM ledger.groups WHERE reverses = p_group_id AND idempotency_key = p_idempotency_key) THEN
      RETURN ledger.replay_group('REVERSAL', v_original.asset, v_accounts, v_amounts, p_idempotency_key,
                                 v_original.intent_ref, v_original.policy_id, p_reason, p_group_id);
    END IF;
    RAISE EXCEPTION 'LEDGER_ALREADY_REVERSED: group % was reversed by a concurrent transaction', p_group_id
      USING ERRCODE = 'LG004';
  END;
END
$$;

REVOKE ALL ON FUNCTION ledger.register_asset(text, text, text, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION ledger.post_group(text, text, jsonb, text, text, text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION ledger.reverse_group(text, text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION ledger.write_group(text, text, text[], numeric[], text, text, text, text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION ledger.replay_group(text, text, text[], numeric[], text, text, text, text, text) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- Read views. Balances are computed from entries, never stored: a stored running balance would
-- be one hot row per treasury account that every posting has to lock.
-- ---------------------------------------------------------------------------------------------

CREATE VIEW ledger.account_balances AS
SELECT a.account_id, a.kind, a.asset, s.chain, s.token, s.symbol, s.decimals, a.ref, a.created_at,
       coalesce(b.balance, 0) AS balance,
       b.entry_count,
       b.last_entry_seq
  FROM ledger.accounts a
  JOIN ledger.assets s ON s.asset_id = a.asset
  CROSS JOIN LATERAL (
    SELECT sum(e.amount) AS balance, count(*) AS entry_count, max(e.seq) AS last_entry_seq
      FROM ledger.entries e WHERE e.account_id = a.account_id
  ) b;

-- One line per asset (a token on one chain, i.e. one rail): net must be 0.
CREATE VIEW ledger.trial_balance AS
SELECT s.asset_id AS asset, s.chain, s.token, s.symbol, s.decimals,
       coalesce(sum(e.amount) FILTER (WHERE e.amount > 0), 0)  AS debits,
       coalesce(-sum(e.amount) FILTER (WHERE e.amount < 0), 0) AS credits,
       coalesce(sum(e.amount), 0)                              AS net,
       count(e.seq)                                                           AS entry_count
  FROM ledger.assets s
  LEFT JOIN ledger.entries e ON e.asset = s.asset_id
 GROUP BY s.asset_id, s.chain, s.token, s.symbol, s.decimals;

-- The trial balance's lines: balance per account kind within each asset.
CREATE VIEW ledger.kind_balances AS
SELECT a.asset, a.kind, sum(e.amount) AS balance, count(*) AS entry_count
  FROM ledger.entries e
  JOIN ledger.accounts a ON a.account_id = e.account_id
 GROUP BY a.asset, a.kind;

CREATE FUNCTION ledger.balance_of(p_account_id text) RETURNS numeric
LANGUAGE sql STABLE AS $$
  SELECT coalesce(sum(amount), 0) FROM ledger.entries WHERE account_id = p_account_id
$$;
