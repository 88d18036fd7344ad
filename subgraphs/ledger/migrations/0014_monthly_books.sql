-- Ledger groups and entries partitioned by month (issue #32 item 5; docs/operations.md
-- "Partitioning the append-only tables", docs/ledger.md "Months"). Both tables are
-- PARTITION BY RANGE (group_id): a group id starts with the millisecond it was made (migration
-- 0012), so a month of groups is one range of ids, 'lg_' and the month's first millisecond in 12
-- hex digits (then 12 zeros) up to the next month's, and a group and its entries always sit in the same month
-- (entries carry their group's id). Months are named groups_pYYYY_MM / entries_pYYYY_MM and made
-- in pairs; a DEFAULT partition of each takes any id no month covers (an id made before 0012,
-- whose digits are random, or a clock far from today), so a posting never fails for want of a
-- partition. group_id is compared byte-wise (COLLATE "C"), as the ids were made.
--
-- What a partitioned table cannot hold, and where it went:
--   * Unique keys other than the partition key. The idempotency key and "a group is reversed at
--     most once" hold across every month in ledger.group_keys, one narrow row per group (key,
--     group id, what it reverses), claimed by the posting functions before the group is written;
--     the group's COMMIT check proves it holds its own key. seq stays unique by construction (an
--     identity, GENERATED ALWAYS, CACHE 1, as mark_checkpoint_horizon requires) and is indexed
--     as before, no longer by a unique index.
--   * Foreign keys into a month that may be detached. The five from ledger.service_payments and
--     the reversal's pointer would forbid ever detaching a month that a payment or a later
--     reversal names. A payment's group ids are checked to exist when they are set (trigger
--     service_payments_groups_exist, the same refusal as the foreign keys gave); a reversal's
--     target is read by reverse_group before it is written, and groups are never deleted.
-- Archive: ledger.detach_group_month_partitions detaches whole past months, groups with their
-- entries, only once every entry of the month lies at or below the balance checkpoint (so no
-- balance and no trial balance changes); the keys stay, so a replay of an archived group's key is
-- still recognised, and refused with the reason.

-- ---------------------------------------------------------------------------------------------
-- The months: bounds and the pair of functions (the worker makes the coming months; the owner
-- detaches past ones).
-- ---------------------------------------------------------------------------------------------

/**
 * The smallest group id made at or after p_at's millisecond (its random digits all zero): a
 * month's lower bound, itself a well-formed id, as a bound of a ledger.group_id column must be.
 */
CREATE FUNCTION ledger.group_id_floor(p_at timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT 'lg_' || lpad(to_hex(floor(extract(epoch FROM p_at) * 1000)::bigint), 12, '0') || '000000000000'
$$;
REVOKE ALL ON FUNCTION ledger.group_id_floor(timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.group_id_floor(timestamptz) TO spend_control_service;

/**
 * Writes the two lookups the posting and payment checks make by group id, each reading the one
 * month the id falls in with a query written for that month:
 *   ledger.month_group(id)   whether the group is there, its kind, asset and declared entry count;
 *   ledger.month_entries(id) the count, sum and debits (sum of the positive amounts) of its entries.
 * They are called once or twice per group posted (assert_entries_belong, assert_group_complete)
 * and per payment recorded. A query on ledger.groups or ledger.entries itself would do as well
 * only when planned for each call (its plan then holds the id's month): a plan kept for any id
 * holds every month, and each use locks them all, so it costs more with each month of history
 * (bench:ledger with 60 past months: 1,400 groups/s instead of 13,000); planned for each call, it
 * costs the posting path a quarter to a half of its throughput. Here each month's query keeps its
 * plan, which holds that month only. Written again whenever a month is made or detached; an id
 * outside every month is in the DEFAULT partitions, as the tables route it.
 */
CREATE FUNCTION ledger.write_month_lookups() RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $gen$
DECLARE
  v_groups text := '';
  v_entries text := '';
  v_month record;
BEGIN
  FOR v_month IN
    SELECT substring(c.relname FROM '^entries_(p[0-9]{4}_[0-9]{2})$') AS suffix,
           substring(pg_get_expr(c.relpartbound, c.oid) FROM 'FROM \(''([^'']+)''\)') AS low,
           substring(pg_get_expr(c.relpartbound, c.oid) FROM 'TO \(''([^'']+)''\)') AS high
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'ledger.entries'::regclass AND c.relname ~ '^entries_p[0-9]{4}_[0-9]{2}$'
     ORDER BY c.relname DESC -- the newest month first: where postings go
  LOOP
    v_groups := v_groups || format(
      E'  IF p_group_id >= %L COLLATE "C" AND p_group_id < %L COLLATE "C" THEN\n'
      || E'    SELECT g.kind, g.asset, g.entry_count INTO kind, asset, entry_count\n'
      || E'      FROM ledger.%I g WHERE g.group_id = p_group_id;\n'
      || E'    present := FOUND;\n    RETURN;\n  END IF;\n',
      v_month.low, v_month.high, 'groups_' || v_month.suffix);
    v_entries := v_entries || format(
      E'  IF p_group_id >= %L COLLATE "C" AND p_group_id < %L COLLATE "C" THEN\n'
      || E'    SELECT count(*), coalesce(sum(e.amount), 0), coalesce(sum(e.amount) FILTER (WHERE e.amount > 0), 0)\n'
      || E'      INTO entries, total, debits FROM ledger.%I e WHERE e.group_id = p_group_id;\n'
      || E'    RETURN;\n  END IF;\n',
      v_month.low, v_month.high, 'entries_' || v_month.suffix);
  END LOOP;
  EXECUTE format($f$
CREATE OR REPLACE FUNCTION ledger.month_group(p_group_id text, OUT present boolean, OUT kind ledger.group_kind,
                                              OUT asset text, OUT entry_count smallint)
LANGUAGE plpgsql STABLE AS $body$
-- Written by ledger.write_month_lookups() for the months attached now (the schema dump shows this line only).
BEGIN
%s  SELECT g.kind, g.asset, g.entry_count INTO kind, asset, entry_count
    FROM ledger.groups_pdefault g WHERE g.group_id = p_group_id;
  present := FOUND;
END
$body$
$f$, v_groups);
  EXECUTE format($f$
CREATE OR REPLACE FUNCTION ledger.month_entries(p_group_id text, OUT entries integer, OUT total numeric,
                                                OUT debits numeric)
LANGUAGE plpgsql STABLE AS $body$
-- Written by ledger.write_month_lookups() for the months attached now (the schema dump shows this line only).
BEGIN
%s  SELECT count(*), coalesce(sum(e.amount), 0), coalesce(sum(e.amount) FILTER (WHERE e.amount > 0), 0)
    INTO entries, total, debits FROM ledger.entries_pdefault e WHERE e.group_id = p_group_id;
END
$body$
$f$, v_entries);
  EXECUTE 'REVOKE ALL ON FUNCTION ledger.month_group(text), ledger.month_entries(text) FROM PUBLIC';
  EXECUTE 'GRANT EXECUTE ON FUNCTION ledger.month_group(text), ledger.month_entries(text) TO spend_control_service';
END
$gen$;
REVOKE ALL ON FUNCTION ledger.write_month_lookups() FROM PUBLIC;

/**
 * The month partitions of ledger.groups and ledger.entries, made in pairs from p_from's month
 * through p_through's (UTC), unless made; returns the tables made. A month whose groups or entries
 * already sit in a DEFAULT partition is left there (a month beside them would be refused).
 */
CREATE FUNCTION ledger.ensure_group_month_partitions(p_from timestamptz, p_through timestamptz)
RETURNS SETOF text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_month timestamp := date_trunc('month', p_from AT TIME ZONE 'UTC');
  v_last timestamp := date_trunc('month', p_through AT TIME ZONE 'UTC');
  v_low text;
  v_high text;
  v_table text;
  v_name text;
  v_made boolean := false;
BEGIN
  IF p_from IS NULL OR p_through IS NULL OR v_last < v_month OR v_last > v_month + interval '120 months' THEN
    RAISE EXCEPTION 'PARTITION_RANGE_INVALID: months from % through % (at most 120)', p_from, p_through
      USING ERRCODE = '22023';
  END IF;
  PERFORM set_config('lock_timeout', '2s', true);
  PERFORM pg_advisory_xact_lock(hashtext('ledger.ensure_group_month_partitions'), 0);
  WHILE v_month <= v_last LOOP
    v_low := ledger.group_id_floor(v_month AT TIME ZONE 'UTC');
    v_high := ledger.group_id_floor((v_month + interval '1 month') AT TIME ZONE 'UTC');
    IF to_regclass(format('ledger.groups_p%s', to_char(v_month, 'YYYY_MM'))) IS NULL
       AND NOT EXISTS (SELECT 1 FROM ledger.groups_pdefault d WHERE d.group_id >= v_low AND d.group_id < v_high)
       AND NOT EXISTS (SELECT 1 FROM ledger.entries_pdefault d WHERE d.group_id >= v_low AND d.group_id < v_high) THEN
      FOREACH v_table IN ARRAY ARRAY['groups', 'entries'] LOOP
        v_name := format('%s_p%s', v_table, to_char(v_month, 'YYYY_MM'));
        -- Made apart and attached: ATTACH lets the table's writers go on.
        EXECUTE format('CREATE TABLE ledger.%I (LIKE ledger.%I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)',
                       v_name, v_table);
        EXECUTE format('ALTER TABLE ledger.%I ATTACH PARTITION ledger.%I FOR VALUES FROM (%L) TO (%L)',
                       v_table, v_name, v_low, v_high);
        PERFORM ledger.guard_group_month(v_name);
        v_made := true;
        RETURN NEXT v_name;
      END LOOP;
    END IF;
    v_month := v_month + interval '1 month';
  END LOOP;
  IF v_made THEN
    PERFORM ledger.write_month_lookups();
  END IF;
END
$$;
REVOKE ALL ON FUNCTION ledger.ensure_group_month_partitions(timestamptz, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.ensure_group_month_partitions(timestamptz, timestamptz) TO spend_control_service;

/**
 * A month (or DEFAULT) partition of groups or entries is written through its table only: the
 * service may read it (as it reads the table, and as ledger.month_group and ledger.month_entries read it), never
 * write it; and it has its own TRUNCATE guard firing ALWAYS (the row guards are cloned from the
 * table).
 */
CREATE FUNCTION ledger.guard_group_month(p_name text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  EXECUTE format('REVOKE ALL ON ledger.%I FROM PUBLIC, spend_control_service', p_name);
  EXECUTE format('GRANT SELECT ON ledger.%I TO spend_control_service', p_name);
  EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON ledger.%I FOR EACH STATEMENT EXECUTE FUNCTION ledger.reject_mutation()',
                 p_name || '_no_truncate', p_name);
  EXECUTE format('ALTER TABLE ledger.%I ENABLE ALWAYS TRIGGER %I', p_name, p_name || '_no_truncate');
END
$$;
REVOKE ALL ON FUNCTION ledger.guard_group_month(text) FROM PUBLIC;

/**
 * Detaches the month partitions of groups and entries that end at or before p_before (never the
 * current month or a later one, nor the DEFAULT partitions), oldest first, each month's entries
 * with its groups; returns their names. It stops, with a notice, at the first month holding an
 * entry past the balance checkpoint: every balance reads the checkpoint plus the entries after
 * it, so only a month wholly inside the checkpoint leaves the books unchanged when it goes.
 */
CREATE FUNCTION ledger.detach_group_month_partitions(p_before timestamptz)
RETURNS SETOF text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_cut timestamp := least(p_before AT TIME ZONE 'UTC', date_trunc('month', now() AT TIME ZONE 'UTC'));
  v_part record;
  v_entries text;
  v_open boolean;
  v_detached boolean := false;
BEGIN
  IF p_before IS NULL THEN
    RAISE EXCEPTION 'PARTITION_RANGE_INVALID: detach before what?' USING ERRCODE = '22023';
  END IF;
  PERFORM set_config('lock_timeout', '5s', true);
  FOR v_part IN
    SELECT c.relname, substring(c.relname FROM '^groups_p([0-9]{4}_[0-9]{2})$') AS suffix,
           to_timestamp(substring(c.relname FROM '^groups_p([0-9]{4}_[0-9]{2})$'), 'YYYY_MM')::timestamp AS month
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'ledger.groups'::regclass AND c.relname ~ '^groups_p[0-9]{4}_[0-9]{2}$'
     ORDER BY 3
  LOOP
    EXIT WHEN v_part.month + interval '1 month' > v_cut;
    v_entries := 'entries_p' || v_part.suffix;
    -- Held until COMMIT: no entry can join the month between the check and the detach.
    EXECUTE format('LOCK TABLE ledger.%I IN SHARE MODE', v_entries);
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM ledger.%I e WHERE e.seq > (SELECT k.through_seq FROM ledger.balance_checkpoint k))',
                   v_entries) INTO v_open;
    IF v_open THEN
      RAISE NOTICE 'LEDGER_MONTH_OPEN: % holds entries past the balance checkpoint; it and later months stay', v_part.suffix;
      EXIT;
    END IF;
    EXECUTE format('ALTER TABLE ledger.entries DETACH PARTITION ledger.%I', v_entries);
    EXECUTE format('ALTER TABLE ledger.groups DETACH PARTITION ledger.%I', v_part.relname);
    RETURN NEXT v_entries;
    RETURN NEXT v_part.relname;
    v_detached := true;
  END LOOP;
  IF v_detached THEN
    PERFORM ledger.write_month_lookups();
  END IF;
END
$$;
REVOKE ALL ON FUNCTION ledger.detach_group_month_partitions(timestamptz) FROM PUBLIC, spend_control_service;

-- ---------------------------------------------------------------------------------------------
-- The conversion: the readers of the tables' row types and the foreign keys go first, the tables
-- are set aside under other names, and made again partitioned with their rows, ids and seqs.
-- ---------------------------------------------------------------------------------------------

DROP VIEW ledger.account_balances, ledger.kind_balances, ledger.trial_balance;
DROP FUNCTION ledger.entries_since_checkpoint();
ALTER TABLE ledger.service_payments
  DROP CONSTRAINT service_payments_clear_group_id_fkey,
  DROP CONSTRAINT service_payments_fee_group_id_fkey,
  DROP CONSTRAINT service_payments_funding_group_id_fkey,
  DROP CONSTRAINT service_payments_refund_group_id_fkey,
  DROP CONSTRAINT service_payments_reversal_group_id_fkey;

ALTER TABLE ledger.groups RENAME TO groups_unpartitioned;
ALTER TABLE ledger.entries RENAME TO entries_unpartitioned;
ALTER SEQUENCE ledger.groups_seq_seq RENAME TO groups_unpartitioned_seq_seq;
ALTER SEQUENCE ledger.entries_seq_seq RENAME TO entries_unpartitioned_seq_seq;
DO $$
DECLARE
  v_index record;
BEGIN
  FOR v_index IN
    SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     WHERE i.indrelid IN ('ledger.groups_unpartitioned'::regclass, 'ledger.entries_unpartitioned'::regclass)
  LOOP
    EXECUTE format('ALTER INDEX ledger.%I RENAME TO %I', v_index.relname, v_index.relname || '_unpartitioned');
  END LOOP;
END
$$;

CREATE TABLE ledger.group_keys (
  idempotency_key ledger.idempotency_key NOT NULL,
  group_id        ledger.group_id        NOT NULL,
  reverses        ledger.group_id,
  CONSTRAINT group_keys_pkey PRIMARY KEY (idempotency_key)
);
-- A group is reversed at most once (reverse_group reads this constraint's name).
CREATE UNIQUE INDEX groups_reverses_once ON ledger.group_keys (reverses) WHERE reverses IS NOT NULL;
INSERT INTO ledger.group_keys (idempotency_key, group_id, reverses)
  SELECT idempotency_key, group_id, reverses FROM ledger.groups_unpartitioned;
CREATE TRIGGER group_keys_append_only BEFORE DELETE OR UPDATE OR TRUNCATE ON ledger.group_keys
  FOR EACH STATEMENT EXECUTE FUNCTION ledger.reject_mutation();

CREATE TABLE ledger.groups (
  group_id        ledger.group_id COLLATE "C" NOT NULL,
  seq             bigint GENERATED ALWAYS AS IDENTITY,
  kind            ledger.group_kind NOT NULL,
  asset           text NOT NULL,
  entry_count     smallint NOT NULL,
  idempotency_key ledger.idempotency_key NOT NULL,
  intent_ref      ledger.intent_ref,
  policy_id       ledger.policy_id,
  reverses        ledger.group_id,
  memo            text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT groups_entry_count_range CHECK (entry_count >= 2 AND entry_count <= 64),
  CONSTRAINT groups_memo_length CHECK (char_length(memo) <= 500),
  CONSTRAINT groups_reversal_points_back CHECK ((kind = 'REVERSAL'::ledger.group_kind) = (reverses IS NOT NULL)),
  CONSTRAINT groups_pkey PRIMARY KEY (group_id)
) PARTITION BY RANGE (group_id);

CREATE TABLE ledger.entries (
  group_id    text COLLATE "C" NOT NULL,
  entry_no    smallint NOT NULL,
  seq         bigint GENERATED ALWAYS AS IDENTITY,
  account_id  text NOT NULL,
  asset       text NOT NULL,
  amount      ledger.amount NOT NULL,
  entry_count smallint NOT NULL,
  CONSTRAINT entries_pkey PRIMARY KEY (group_id, entry_no)
) PARTITION BY RANGE (group_id);

CREATE TABLE ledger.groups_pdefault PARTITION OF ledger.groups DEFAULT;
CREATE TABLE ledger.entries_pdefault PARTITION OF ledger.entries DEFAULT;

SELECT ledger.ensure_group_month_partitions(
         greatest(least(now(), (SELECT min(created_at) FROM ledger.groups_unpartitioned)), now() - interval '116 months'),
         now() + interval '3 months');
SELECT ledger.write_month_lookups(); -- written by the ensure above too; here in case it made none

INSERT INTO ledger.groups (group_id, seq, kind, asset, entry_count, idempotency_key, intent_ref, policy_id, reverses,
                           memo, created_at) OVERRIDING SYSTEM VALUE
  SELECT group_id, seq, kind, asset, entry_count, idempotency_key, intent_ref, policy_id, reverses, memo, created_at
    FROM ledger.groups_unpartitioned;
INSERT INTO ledger.entries (group_id, entry_no, seq, account_id, asset, amount, entry_count) OVERRIDING SYSTEM VALUE
  SELECT group_id, entry_no, seq, account_id, asset, amount, entry_count FROM ledger.entries_unpartitioned;
-- The seqs go on where the old identities were (a rolled-back posting's seqs stay unused).
SELECT setval('ledger.groups_seq_seq', s.last_value, s.is_called) FROM ledger.groups_unpartitioned_seq_seq s;
SELECT setval('ledger.entries_seq_seq', s.last_value, s.is_called) FROM ledger.entries_unpartitioned_seq_seq s;

DROP TABLE ledger.groups_unpartitioned, ledger.entries_unpartitioned;

-- The indexes of before, each on every month. seq is unique by construction (above).
CREATE INDEX groups_seq ON ledger.groups (seq);
CREATE INDEX groups_created_at ON ledger.groups USING brin (created_at);
CREATE INDEX groups_intent_ref_seq ON ledger.groups (intent_ref, seq) WHERE intent_ref IS NOT NULL;
CREATE INDEX groups_policy_id_seq ON ledger.groups (policy_id, seq) WHERE policy_id IS NOT NULL;
CREATE INDEX groups_reverses ON ledger.groups (reverses) WHERE reverses IS NOT NULL;
CREATE INDEX entries_seq ON ledger.entries (seq);
CREATE INDEX entries_account_seq ON ledger.entries (account_id, seq);

-- The guards of before, on the tables (statements, even of no rows) and on every month, made now
-- or later (rows; TRUNCATE by guard_group_month, which ensure_group_month_partitions calls for
-- each month it makes). The migration runner makes them fire ALWAYS.
CREATE TRIGGER groups_append_only BEFORE DELETE OR UPDATE OR TRUNCATE ON ledger.groups
  FOR EACH STATEMENT EXECUTE FUNCTION ledger.reject_mutation();
CREATE TRIGGER groups_append_only_rows BEFORE DELETE OR UPDATE ON ledger.groups
  FOR EACH ROW EXECUTE FUNCTION ledger.reject_mutation();
CREATE TRIGGER entries_append_only BEFORE DELETE OR UPDATE OR TRUNCATE ON ledger.entries
  FOR EACH STATEMENT EXECUTE FUNCTION ledger.reject_mutation();
CREATE TRIGGER entries_append_only_rows BEFORE DELETE OR UPDATE ON ledger.entries
  FOR EACH ROW EXECUTE FUNCTION ledger.reject_mutation();
CREATE TRIGGER entries_belong_to_group AFTER INSERT ON ledger.entries
  REFERENCING NEW TABLE AS new_entries
  FOR EACH STATEMENT EXECUTE FUNCTION ledger.assert_entries_belong();
CREATE CONSTRAINT TRIGGER groups_complete_at_commit AFTER INSERT ON ledger.groups
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION ledger.assert_group_complete();
SELECT ledger.guard_group_month('groups_pdefault'), ledger.guard_group_month('entries_pdefault');

REVOKE ALL ON ledger.groups, ledger.entries, ledger.group_keys FROM PUBLIC, spend_control_service;
GRANT SELECT ON ledger.groups, ledger.entries, ledger.group_keys TO spend_control_service;
GRANT SELECT, USAGE ON SEQUENCE ledger.groups_seq_seq, ledger.entries_seq_seq TO spend_control_service;

-- ---------------------------------------------------------------------------------------------
-- The readers of the entries' row type, as migration 0011 made them.
-- ---------------------------------------------------------------------------------------------

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


CREATE VIEW ledger.account_balances AS
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

CREATE VIEW ledger.kind_balances AS
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

CREATE VIEW ledger.trial_balance AS
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
REVOKE ALL ON ledger.account_balances, ledger.kind_balances, ledger.trial_balance FROM PUBLIC, spend_control_service;
GRANT SELECT ON ledger.account_balances, ledger.kind_balances, ledger.trial_balance TO spend_control_service;
REVOKE ALL ON FUNCTION ledger.entries_since_checkpoint() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.entries_since_checkpoint() TO spend_control_service;

-- ---------------------------------------------------------------------------------------------
-- The write path, with the keys in ledger.group_keys.
-- ---------------------------------------------------------------------------------------------

-- At COMMIT, once per group, as before (every declared slot filled, the amounts sum to zero), and
-- now also: the group holds its own key (a group written past the posting functions, by the owner,
-- with a key another group holds, or with none, is refused as the unique key refused it).
-- The entries are read from the group's month by ledger.month_entries (above, for why).
CREATE OR REPLACE FUNCTION ledger.assert_group_complete() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_entries integer;
  v_sum     numeric;
BEGIN
  SELECT t.entries, t.total INTO v_entries, v_sum FROM ledger.month_entries(NEW.group_id) t;
  IF v_entries <> NEW.entry_count THEN
    RAISE EXCEPTION 'LEDGER_GROUP_UNBALANCED: group % has % of % declared entries',
      NEW.group_id, v_entries, NEW.entry_count USING ERRCODE = 'LG001';
  END IF;
  IF v_sum <> 0 THEN
    RAISE EXCEPTION 'LEDGER_GROUP_UNBALANCED: group % sums to %, not 0', NEW.group_id, v_sum
      USING ERRCODE = 'LG001';
  END IF;
  IF (SELECT k.group_id = NEW.group_id AND k.reverses IS NOT DISTINCT FROM NEW.reverses
        FROM ledger.group_keys k WHERE k.idempotency_key = NEW.idempotency_key) IS NOT TRUE THEN
    RAISE EXCEPTION 'duplicate key value violates unique constraint "group_keys_pkey": group % does not hold its idempotency key % in ledger.group_keys',
      NEW.group_id, NEW.idempotency_key
      USING ERRCODE = 'unique_violation', SCHEMA = 'ledger', TABLE = 'group_keys', CONSTRAINT = 'group_keys_pkey';
  END IF;
  RETURN NULL;
END
$$;

-- A retried posting with the same key returns the first group; the same key with any other
-- payload is a conflict (as migration 0001), the group found through its key. A key whose group's
-- month was detached for archive is still a key used: refused as a conflict, saying so.
CREATE OR REPLACE FUNCTION ledger.replay_group(
  p_kind text, p_asset text, p_accounts text[], p_amounts numeric[], p_idempotency_key text,
  p_intent_ref text, p_policy_id text, p_memo text, p_reverses text)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v_key   ledger.group_keys;
  v_first ledger.groups;
BEGIN
  SELECT * INTO v_key FROM ledger.group_keys WHERE idempotency_key = p_idempotency_key;
  IF NOT FOUND THEN
    -- Only under REPEATABLE READ or SERIALIZABLE: the first posting committed after this
    -- transaction's snapshot was taken. A retry of the whole transaction will see it.
    RAISE EXCEPTION 'could not serialize: idempotency key % was used by a concurrent transaction',
      p_idempotency_key USING ERRCODE = '40001';
  END IF;
  SELECT * INTO v_first FROM ledger.groups WHERE group_id = v_key.group_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'LEDGER_IDEMPOTENCY_CONFLICT: idempotency key % already posted group %, whose month is archived',
      p_idempotency_key, v_key.group_id USING ERRCODE = 'LG005';
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

-- As migration 0001, with the earlier reversal found through ledger.group_keys.
CREATE OR REPLACE FUNCTION ledger.reverse_group(p_group_id text, p_reason text, p_idempotency_key text)
RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_generic_plan AS $$
DECLARE
  v_original   ledger.groups;
  v_prior      ledger.group_keys;
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
  SELECT * INTO v_prior FROM ledger.group_keys WHERE reverses = p_group_id;
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
    IF EXISTS (SELECT 1 FROM ledger.group_keys WHERE reverses = p_group_id AND idempotency_key = p_idempotency_key) THEN
      RETURN ledger.replay_group('REVERSAL', v_original.asset, v_accounts, v_amounts, p_idempotency_key,
                                 v_original.intent_ref, v_original.policy_id, p_reason, p_group_id);
    END IF;
    RAISE EXCEPTION 'LEDGER_ALREADY_REVERSED: group % was reversed by a concurrent transaction', p_group_id
      USING ERRCODE = 'LG004';
  END;
END
$$;

-- A payment's groups exist when they are set, as the foreign keys this replaces required (groups
-- are never deleted; a month detached for archive takes its groups out of reach on purpose).
CREATE FUNCTION ledger.service_payment_groups_exist() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_column text;
  v_group  text;
BEGIN
  FOR v_column, v_group IN
    SELECT x.col, x.id
      FROM (VALUES ('fee_group_id', NEW.fee_group_id, CASE WHEN TG_OP = 'UPDATE' THEN OLD.fee_group_id END),
                   ('clear_group_id', NEW.clear_group_id, CASE WHEN TG_OP = 'UPDATE' THEN OLD.clear_group_id END),
                   ('funding_group_id', NEW.funding_group_id, CASE WHEN TG_OP = 'UPDATE' THEN OLD.funding_group_id END),
                   ('refund_group_id', NEW.refund_group_id, CASE WHEN TG_OP = 'UPDATE' THEN OLD.refund_group_id END),
                   ('reversal_group_id', NEW.reversal_group_id, CASE WHEN TG_OP = 'UPDATE' THEN OLD.reversal_group_id END))
             AS x(col, id, was)
     WHERE x.id IS NOT NULL AND x.id IS DISTINCT FROM x.was
  LOOP
    IF NOT (ledger.month_group(v_group)).present THEN
      RAISE EXCEPTION 'insert or update on table "service_payments" violates foreign key constraint "service_payments_%_fkey": no ledger group %',
        v_column, v_group
        USING ERRCODE = 'foreign_key_violation', SCHEMA = 'ledger', TABLE = 'service_payments',
              CONSTRAINT = format('service_payments_%s_fkey', v_column);
    END IF;
  END LOOP;
  RETURN NEW;
END
$$;
CREATE TRIGGER service_payments_groups_exist BEFORE INSERT OR UPDATE ON ledger.service_payments
  FOR EACH ROW EXECUTE FUNCTION ledger.service_payment_groups_exist();
-- Migration 0001's statement check of new entries, each entry's group read from its month by
-- ledger.month_group (above, for why).
CREATE OR REPLACE FUNCTION ledger.assert_entries_belong() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_bad_asset   text;
  v_bad_slot    text;
  v_bad_group   text;
  v_bad_account text;
BEGIN
  SELECT min(n.account_id) FILTER (WHERE split_part(n.account_id, ':', 2) || ':' || split_part(n.account_id, ':', 3)
                                         IS DISTINCT FROM n.asset),
         min(n.group_id) FILTER (WHERE n.entry_no NOT BETWEEN 1 AND n.entry_count),
         min(n.group_id) FILTER (WHERE (SELECT g.present AND g.asset = n.asset AND g.entry_count = n.entry_count
                                          FROM ledger.month_group(n.group_id) g) IS NOT TRUE),
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

-- Migration 0008's checks of a payment's groups, the group and its entries read from its month by
-- ledger.month_group and ledger.month_entries (above, for why).
CREATE OR REPLACE FUNCTION ledger.service_payment_group_is(p_row ledger.service_payments, p_group text, p_kinds text[])
RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT coalesce(g.present AND g.kind::text = ANY (p_kinds) AND g.asset = p_row.network || '|' || p_row.asset
                  AND (SELECT e.debits FROM ledger.month_entries(p_group) e) = p_row.amount, false)
    FROM ledger.month_group(p_group) g;
$$;

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
  SELECT g.kind, g.asset, (SELECT e.debits FROM ledger.month_entries(NEW.fee_group_id) e)
    INTO v_kind, v_asset, v_debit
    FROM ledger.month_group(NEW.fee_group_id) g WHERE g.present;
  IF v_kind IS DISTINCT FROM 'SERVICE_FEE' OR v_asset IS DISTINCT FROM NEW.network || '|' || NEW.asset
     OR v_debit IS DISTINCT FROM NEW.amount THEN
    RAISE EXCEPTION 'SERVICE_PAYMENT_FEE_MISMATCH: group % is not a SERVICE_FEE of % on %|%',
      NEW.fee_group_id, NEW.amount, NEW.network, NEW.asset USING ERRCODE = 'LG006';
  END IF;
  RETURN NEW;
END;
$$;

-- write_group as migration 0012 made it, with the key claimed in ledger.group_keys.
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
    -- The key is claimed in ledger.group_keys (one row per key across every month of groups; a
    -- reversal's target once, groups_reverses_once); the group is written only if it was.
    INSERT INTO ledger.group_keys (idempotency_key, group_id, reverses)
    SELECT p_idempotency_key, v_group_id, p_reverses
     WHERE EXISTS (SELECT 1 FROM ledger.assets WHERE asset_id = p_asset)
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING group_id
  ), grouped AS (
    INSERT INTO ledger.groups (group_id, kind, asset, entry_count, idempotency_key, intent_ref, policy_id, reverses, memo)
    SELECT c.group_id, p_kind::ledger.group_kind, p_asset, v_count, p_idempotency_key, p_intent_ref, p_policy_id,
           p_reverses, p_memo
      FROM claimed c
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

-- post_groups as migration 0012 made it, with the keys claimed in ledger.group_keys.
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
  --   claimed  claims the idempotency keys (ledger.group_keys), in key order;
  --   grouped  writes the claimed groups;
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
    INSERT INTO ledger.group_keys (idempotency_key, group_id)
    SELECT g.idem, g.id
      FROM g
     WHERE NOT EXISTS (SELECT 1 FROM verdict)
     ORDER BY g.idem COLLATE "C"
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING group_id
  ), grouped AS (
    INSERT INTO ledger.groups (group_id, kind, asset, entry_count, idempotency_key, intent_ref, policy_id, memo)
    SELECT g.id, g.kind::ledger.group_kind, g.asset, g.size, g.idem, g.intent, g.policy, g.memo
      FROM claimed c JOIN g ON g.id = c.group_id
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

-- The logs' pair of functions (migration 0013) keep to tables partitioned by a time column:
-- the groups and entries have their own pair (above).
CREATE OR REPLACE FUNCTION ledger.ensure_month_partitions(p_parent regclass, p_from timestamptz, p_through timestamptz)
RETURNS SETOF text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_schema text;
  v_table text;
  v_key text;
  v_month timestamp := date_trunc('month', p_from AT TIME ZONE 'UTC');
  v_last timestamp := date_trunc('month', p_through AT TIME ZONE 'UTC');
  v_start timestamptz;
  v_end timestamptz;
  v_name text;
  v_default_holds boolean;
BEGIN
  SELECT n.nspname, c.relname, substring(pg_get_partkeydef(c.oid) FROM '^RANGE \(([a-z_]+)\)$')
    INTO v_schema, v_table, v_key
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE c.oid = p_parent AND c.relkind = 'p' AND c.relowner = 'spend_control_owner'::regrole
     AND n.nspname = 'ledger'
     AND (SELECT a.atttypid FROM pg_attribute a
           WHERE a.attrelid = c.oid AND a.attnum = (SELECT p.partattrs[0] FROM pg_partitioned_table p WHERE p.partrelid = c.oid))
         = 'timestamptz'::regtype;
  IF v_key IS NULL THEN
    RAISE EXCEPTION 'PARTITION_TABLE_UNKNOWN: % is not a log partitioned by month', p_parent USING ERRCODE = '22023';
  END IF;
  IF p_from IS NULL OR p_through IS NULL OR v_last < v_month OR v_last > v_month + interval '120 months' THEN
    RAISE EXCEPTION 'PARTITION_RANGE_INVALID: months from % through % (at most 120)', p_from, p_through
      USING ERRCODE = '22023';
  END IF;
  -- Waiting behind a long transaction on the log would stall its writers queued behind this; the
  -- worker tries again next round instead.
  PERFORM set_config('lock_timeout', '2s', true);
  -- One maker per log at a time (two workers): the second then finds the months made.
  PERFORM pg_advisory_xact_lock(hashtext('ledger.ensure_month_partitions'), hashtext(p_parent::text));
  WHILE v_month <= v_last LOOP
    v_name := format('%s_p%s', v_table, to_char(v_month, 'YYYY_MM'));
    v_start := v_month AT TIME ZONE 'UTC';
    v_end := (v_month + interval '1 month') AT TIME ZONE 'UTC';
    IF to_regclass(format('%I.%I', v_schema, v_name)) IS NULL THEN
      -- Rows of this month already in the DEFAULT partition stay there (a month partition beside
      -- them would be refused): the month is then simply not archivable by itself.
      EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I.%I WHERE %I >= $1 AND %I < $2)',
                     v_schema, v_table || '_pdefault', v_key, v_key)
        INTO v_default_holds USING v_start, v_end;
      IF NOT v_default_holds THEN
        BEGIN
          -- Made apart and attached: ATTACH takes a lock that lets the log's writers go on.
          EXECUTE format('CREATE TABLE %I.%I (LIKE %I.%I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)',
                         v_schema, v_name, v_schema, v_table);
          EXECUTE format('ALTER TABLE %I.%I ATTACH PARTITION %I.%I FOR VALUES FROM (%L) TO (%L)',
                         v_schema, v_table, v_schema, v_name, v_start, v_end);
          -- Reached through the log only: the default privileges' grants do not apply here. The
          -- log's guards are cloned onto the month as they stand on the log (firing ALWAYS).
          EXECUTE format('REVOKE ALL ON %I.%I FROM PUBLIC, spend_control_service', v_schema, v_name);
          RETURN NEXT v_name;
        EXCEPTION WHEN duplicate_table THEN
          NULL; -- another worker made it first
        END;
      END IF;
    END IF;
    v_month := v_month + interval '1 month';
  END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION ledger.detach_month_partitions(p_parent regclass, p_before timestamptz)
RETURNS SETOF text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_schema text;
  v_table text;
  v_cut timestamp := least(p_before AT TIME ZONE 'UTC', date_trunc('month', now() AT TIME ZONE 'UTC'));
  v_part record;
BEGIN
  SELECT n.nspname, c.relname INTO v_schema, v_table
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE c.oid = p_parent AND c.relkind = 'p' AND c.relowner = 'spend_control_owner'::regrole
     AND pg_get_partkeydef(c.oid) ~ '^RANGE \([a-z_]+\)$' AND n.nspname = 'ledger'
     AND (SELECT a.atttypid FROM pg_attribute a
           WHERE a.attrelid = c.oid AND a.attnum = (SELECT p.partattrs[0] FROM pg_partitioned_table p WHERE p.partrelid = c.oid))
         = 'timestamptz'::regtype;
  IF v_table IS NULL THEN
    RAISE EXCEPTION 'PARTITION_TABLE_UNKNOWN: % is not a log partitioned by month', p_parent USING ERRCODE = '22023';
  END IF;
  IF p_before IS NULL THEN
    RAISE EXCEPTION 'PARTITION_RANGE_INVALID: detach before what?' USING ERRCODE = '22023';
  END IF;
  PERFORM set_config('lock_timeout', '5s', true);
  FOR v_part IN
    SELECT c.relname, to_timestamp(substring(c.relname FROM '_p([0-9]{4}_[0-9]{2})$'), 'YYYY_MM')::timestamp AS month
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = p_parent AND c.relname = v_table || '_p' || substring(c.relname FROM '_p([0-9]{4}_[0-9]{2})$')
     ORDER BY 2
  LOOP
    EXIT WHEN v_part.month + interval '1 month' > v_cut;
    EXECUTE format('ALTER TABLE %I.%I DETACH PARTITION %I.%I', v_schema, v_table, v_schema, v_part.relname);
    RETURN NEXT v_part.relname;
  END LOOP;
END
$$;
-- The planner's statistics for the months that hold the moved rows, and the keys, if any. An empty
-- month is left never analyzed: the planner then assumes it holds some pages and plans the
-- posting path's lookups by index, and those plans, cached for the session, stay right as the
-- month fills. Analyzed while empty, it would be planned as empty (a sequential scan), and the
-- cached plan kept until autovacuum analyzes it again.
DO $$
DECLARE
  v_part regclass;
BEGIN
  FOR v_part IN
    SELECT i.inhrelid::regclass FROM pg_inherits i
     WHERE i.inhparent IN ('ledger.groups'::regclass, 'ledger.entries'::regclass)
  LOOP
    IF (SELECT c.relpages > 0 FROM pg_class c WHERE c.oid = v_part) OR pg_relation_size(v_part) > 0 THEN
      EXECUTE format('ANALYZE %s', v_part);
    END IF;
  END LOOP;
  IF EXISTS (SELECT 1 FROM ledger.group_keys) THEN
    ANALYZE ledger.group_keys;
  END IF;
END
$$;
