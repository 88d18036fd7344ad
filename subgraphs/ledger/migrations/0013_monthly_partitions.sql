-- Monthly partitions for the append-only logs that grow without bound and are read by recent time
-- (docs/operations.md "Partitioning the append-only tables"). A log partitioned here is
-- PARTITION BY RANGE over one timestamptz column, with one partition per calendar month (UTC),
-- named <table>_pYYYY_MM, plus a DEFAULT partition (<table>_pdefault) that takes any row no month
-- partition covers yet (an injected clock far from today, a worker that has not run for months),
-- so an insert never fails for want of a partition. The worker keeps the next months made
-- (ensure_month_partitions, any role may run it); an operator detaches whole past months for
-- archive (detach_month_partitions, the owner only): a detached month is a plain table of its own,
-- to be dumped and dropped.
--
-- This migration adds the two functions for the ledger's logs and partitions
-- ledger.operator_actions by `at`. Each schema keeps its own pair for its own logs, as it keeps its
-- own guards, so a subgraph's migrations never need another's schema (policy migration 0015).

/** The month partitions of p_parent, made from p_from's month through p_through's (UTC), unless made. */
CREATE FUNCTION ledger.ensure_month_partitions(p_parent regclass, p_from timestamptz, p_through timestamptz)
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
     AND n.nspname = 'ledger';
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
REVOKE ALL ON FUNCTION ledger.ensure_month_partitions(regclass, timestamptz, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.ensure_month_partitions(regclass, timestamptz, timestamptz) TO spend_control_service;

/**
 * Detaches p_parent's month partitions that end at or before p_before (never the current month's
 * nor a later one, nor the DEFAULT partition), oldest first; each stays as a plain table of the
 * same name, outside the log, to be dumped and dropped. Returns their names.
 */
CREATE FUNCTION ledger.detach_month_partitions(p_parent regclass, p_before timestamptz)
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
     AND pg_get_partkeydef(c.oid) ~ '^RANGE \([a-z_]+\)$' AND n.nspname = 'ledger';
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
REVOKE ALL ON FUNCTION ledger.detach_month_partitions(regclass, timestamptz) FROM PUBLIC, spend_control_service;

-- ledger.operator_actions becomes a log partitioned by `at`: same columns, checks, index, guard and
-- grants; its ids keep counting from where they were. The primary key takes `at` (a partitioned
-- table's unique keys hold its partition key); the id alone still comes from one sequence.
ALTER TABLE ledger.operator_actions RENAME TO operator_actions_unpartitioned;
ALTER TABLE ledger.operator_actions_unpartitioned RENAME CONSTRAINT operator_actions_pkey TO operator_actions_unpartitioned_pkey;
ALTER INDEX ledger.operator_actions_at RENAME TO operator_actions_unpartitioned_at;

CREATE TABLE ledger.operator_actions (
  action_id      bigint      NOT NULL,
  actor          text        NOT NULL,
  action         text        NOT NULL,
  payload        jsonb       NOT NULL,
  result         jsonb       NOT NULL,
  correlation_id text,
  at             timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT operator_actions_actor_length CHECK (char_length(actor) BETWEEN 1 AND 200),
  CONSTRAINT operator_actions_action_known CHECK (action IN ('TREASURY_TRANSFER', 'REVERSE_GROUP')),
  CONSTRAINT operator_actions_result_is_object CHECK (jsonb_typeof(result) = 'object'),
  CONSTRAINT operator_actions_pkey PRIMARY KEY (action_id, at)
) PARTITION BY RANGE (at);
CREATE INDEX operator_actions_at ON ledger.operator_actions (at);
CREATE TABLE ledger.operator_actions_pdefault PARTITION OF ledger.operator_actions DEFAULT;
REVOKE ALL ON ledger.operator_actions_pdefault FROM PUBLIC, spend_control_service;

SELECT ledger.ensure_month_partitions('ledger.operator_actions',
                                      greatest(least(now(), (SELECT min(at) FROM ledger.operator_actions_unpartitioned)), now() - interval '116 months'),
                                      now() + interval '3 months');
INSERT INTO ledger.operator_actions (action_id, actor, action, payload, result, correlation_id, at)
  SELECT action_id, actor, action, payload, result, correlation_id, at FROM ledger.operator_actions_unpartitioned;

DROP TABLE ledger.operator_actions_unpartitioned; -- and its identity sequence, whose name is reused
CREATE SEQUENCE ledger.operator_actions_action_id_seq OWNED BY ledger.operator_actions.action_id;
SELECT setval('ledger.operator_actions_action_id_seq', max(action_id)) FROM ledger.operator_actions HAVING count(*) > 0;
ALTER TABLE ledger.operator_actions ALTER COLUMN action_id SET DEFAULT nextval('ledger.operator_actions_action_id_seq');

-- Append-only: each row (the trigger is cloned onto every partition, made now or later) and the
-- log as a whole (TRUNCATE). The migration runner makes both fire ALWAYS.
CREATE TRIGGER operator_actions_append_only BEFORE UPDATE OR DELETE ON ledger.operator_actions
  FOR EACH ROW EXECUTE FUNCTION ledger.reject_mutation();
CREATE TRIGGER operator_actions_no_truncate BEFORE TRUNCATE ON ledger.operator_actions
  FOR EACH STATEMENT EXECUTE FUNCTION ledger.reject_mutation();

REVOKE ALL ON ledger.operator_actions FROM PUBLIC, spend_control_service;
GRANT SELECT, INSERT ON ledger.operator_actions TO spend_control_service;
GRANT SELECT, USAGE ON SEQUENCE ledger.operator_actions_action_id_seq TO spend_control_service;
