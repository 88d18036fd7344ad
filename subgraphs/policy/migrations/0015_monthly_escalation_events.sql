-- policy.escalation_events becomes a log partitioned by month of `at`, as ledger.operator_actions
-- did in ledger migration 0013 (docs/operations.md "Partitioning the append-only tables"): same
-- columns, checks, indexes, foreign key, guard and grants; seq keeps counting from where it was.
-- The primary key takes `at` (a partitioned table's unique keys hold its partition key); seq alone
-- still comes from one sequence. First, the policy schema's own pair of functions for its logs,
-- the ledger's pair word for word but for the schema: a subgraph's migrations never need another's
-- schema (the policy role migrates only its own).

/** The month partitions of p_parent, made from p_from's month through p_through's (UTC), unless made. */
CREATE FUNCTION policy.ensure_month_partitions(p_parent regclass, p_from timestamptz, p_through timestamptz)
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
     AND n.nspname = 'policy';
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
  PERFORM pg_advisory_xact_lock(hashtext('policy.ensure_month_partitions'), hashtext(p_parent::text));
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
REVOKE ALL ON FUNCTION policy.ensure_month_partitions(regclass, timestamptz, timestamptz) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION policy.ensure_month_partitions(regclass, timestamptz, timestamptz) TO spend_control_service;

/**
 * Detaches p_parent's month partitions that end at or before p_before (never the current month's
 * nor a later one, nor the DEFAULT partition), oldest first; each stays as a plain table of the
 * same name, outside the log, to be dumped and dropped. Returns their names.
 */
CREATE FUNCTION policy.detach_month_partitions(p_parent regclass, p_before timestamptz)
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
     AND pg_get_partkeydef(c.oid) ~ '^RANGE \([a-z_]+\)$' AND n.nspname = 'policy';
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
REVOKE ALL ON FUNCTION policy.detach_month_partitions(regclass, timestamptz) FROM PUBLIC, spend_control_service;

ALTER TABLE policy.escalation_events RENAME TO escalation_events_unpartitioned;
ALTER TABLE policy.escalation_events_unpartitioned RENAME CONSTRAINT escalation_events_pkey TO escalation_events_unpartitioned_pkey;
ALTER INDEX policy.escalation_events_ref RENAME TO escalation_events_unpartitioned_ref;
ALTER INDEX policy.escalation_events_owner RENAME TO escalation_events_unpartitioned_owner;
ALTER SEQUENCE policy.escalation_events_seq_seq OWNED BY NONE;

CREATE TABLE policy.escalation_events (
  seq      bigint      NOT NULL DEFAULT nextval('policy.escalation_events_seq_seq'),
  poll_ref text        CONSTRAINT escalation_events_poll_ref_fkey REFERENCES policy.escalations (poll_ref),
  owner    text        CONSTRAINT escalation_events_owner_check CHECK (owner ~ '^0x[0-9a-f]{40}$'),
  kind     text        NOT NULL CONSTRAINT escalation_events_kind_check CHECK (kind IN (
             'CREATED', 'APPROVED', 'DENIED', 'EXPIRED', 'APPROVAL_USED',
             'REPLY_UNKNOWN_CODE', 'REPLY_CODE_REUSED', 'REPLY_UNBOUND_SENDER', 'REPLY_AFTER_EXPIRY', 'REPLY_ALREADY_RESOLVED',
             'DELIVERY_SENT', 'DELIVERY_FAILED', 'DELIVERY_GAVE_UP')),
  channel  text,
  sender   text,
  detail   text        CONSTRAINT escalation_events_detail_check CHECK (char_length(detail) <= 500),
  at       timestamptz NOT NULL,
  CONSTRAINT escalation_events_pkey PRIMARY KEY (seq, at)
) PARTITION BY RANGE (at);
ALTER SEQUENCE policy.escalation_events_seq_seq OWNED BY policy.escalation_events.seq;
CREATE INDEX escalation_events_ref ON policy.escalation_events (poll_ref, seq);
CREATE INDEX escalation_events_owner ON policy.escalation_events (owner, seq);
CREATE TABLE policy.escalation_events_pdefault PARTITION OF policy.escalation_events DEFAULT;
REVOKE ALL ON policy.escalation_events_pdefault FROM PUBLIC, spend_control_service;

SELECT policy.ensure_month_partitions('policy.escalation_events',
                                      greatest(least(now(), (SELECT min(at) FROM policy.escalation_events_unpartitioned)), now() - interval '116 months'),
                                      now() + interval '3 months');
INSERT INTO policy.escalation_events (seq, poll_ref, owner, kind, channel, sender, detail, at)
  SELECT seq, poll_ref, owner, kind, channel, sender, detail, at FROM policy.escalation_events_unpartitioned;
DROP TABLE policy.escalation_events_unpartitioned;

-- Append-only, each row of every partition (the trigger is cloned onto each, made now or later).
CREATE TRIGGER escalation_events_append_only BEFORE UPDATE OR DELETE ON policy.escalation_events
  FOR EACH ROW EXECUTE FUNCTION policy.refuse_change_rewrite();

REVOKE ALL ON policy.escalation_events FROM PUBLIC, spend_control_service;
GRANT SELECT, INSERT ON policy.escalation_events TO spend_control_service;
