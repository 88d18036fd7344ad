-- Running totals for the preflight window, so a decision's reads stay the same size however busy
-- the policy has been today. Before this, preflight_window summed every reservation of the day and
-- counted every approved call of the hour: a policy deciding 200 times a second spent milliseconds
-- of database time per decision by mid-morning, and more every minute.
--
-- Both tables are kept by triggers on the rows they summarise, in the same transaction, so they
-- can never disagree with them (intent/preflightCalls.test.ts compares them with the raw sums); the
-- rows are written under the policy's decision lock, like the reservations and calls themselves.
--
-- 1. intent.policy_day_totals: per policy and reservation day, the amounts of ACTIVE and of
--    CONSUMED reservations. An ACTIVE reservation stops counting the instant its deadline passes,
--    before any sweep changes its state, so the window's `reserved` is `active` less the ACTIVE
--    reservations of that day already past p_now (an index holds only ACTIVE ones).
-- 2. intent.policy_call_minutes: approved calls per policy and minute (date_bin from the epoch, so
--    no time zone moves a boundary). The calls of the hour before p_now are the full minutes after
--    the minute holding p_now - 1 hour, plus that minute's calls later than p_now - 1 hour.

CREATE TABLE intent.policy_day_totals (
  policy_id text          NOT NULL CHECK (policy_id ~ '^[0-9]{1,78}$'),
  day       date          NOT NULL,
  active    numeric(78,0) NOT NULL DEFAULT 0 CHECK (active >= 0),
  consumed  numeric(78,0) NOT NULL DEFAULT 0 CHECK (consumed >= 0),
  PRIMARY KEY (policy_id, day)
);

CREATE FUNCTION intent.count_reservation() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.state IN ('ACTIVE', 'CONSUMED') THEN
    UPDATE intent.policy_day_totals t
       SET active   = t.active   - CASE WHEN OLD.state = 'ACTIVE'   THEN OLD.amount ELSE 0 END,
           consumed = t.consumed - CASE WHEN OLD.state = 'CONSUMED' THEN OLD.amount ELSE 0 END
     WHERE t.policy_id = OLD.policy_id AND t.day = OLD.day;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.state IN ('ACTIVE', 'CONSUMED') THEN
    -- The row exists for all but a policy's first reservation of a day: a plain UPDATE is far
    -- cheaper than INSERT … ON CONFLICT's speculative insertion.
    UPDATE intent.policy_day_totals t
       SET active   = t.active   + CASE WHEN NEW.state = 'ACTIVE'   THEN NEW.amount ELSE 0 END,
           consumed = t.consumed + CASE WHEN NEW.state = 'CONSUMED' THEN NEW.amount ELSE 0 END
     WHERE t.policy_id = NEW.policy_id AND t.day = NEW.day;
    IF NOT FOUND THEN
      INSERT INTO intent.policy_day_totals AS t (policy_id, day, active, consumed)
      VALUES (NEW.policy_id, NEW.day,
              CASE WHEN NEW.state = 'ACTIVE'   THEN NEW.amount ELSE 0 END,
              CASE WHEN NEW.state = 'CONSUMED' THEN NEW.amount ELSE 0 END)
      ON CONFLICT (policy_id, day) DO UPDATE
        SET active = t.active + excluded.active, consumed = t.consumed + excluded.consumed;
    END IF;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER reservations_count AFTER INSERT OR DELETE OR UPDATE OF policy_id, day, state, amount ON intent.reservations
  FOR EACH ROW EXECUTE FUNCTION intent.count_reservation();

-- Reservations past their deadline but still ACTIVE (no sweep has run): the only rows a window
-- read still visits.
CREATE INDEX reservations_active_deadline ON intent.reservations (policy_id, day, expires_at) WHERE state = 'ACTIVE';

CREATE TABLE intent.policy_call_minutes (
  policy_id text        NOT NULL CHECK (policy_id ~ '^[0-9]{1,78}$'),
  minute    timestamptz NOT NULL,
  calls     integer     NOT NULL CHECK (calls >= 0),
  PRIMARY KEY (policy_id, minute)
);

-- No SET clause, so the planner inlines it (a SQL function with one is planned on every call).
CREATE FUNCTION intent.call_minute(p_at timestamptz) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT pg_catalog.date_bin('1 minute'::pg_catalog.interval, p_at, '1970-01-01 00:00:00+00'::pg_catalog.timestamptz)
$$;

CREATE FUNCTION intent.count_approved_call() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    UPDATE intent.policy_call_minutes m SET calls = m.calls - 1
     WHERE m.policy_id = OLD.policy_id AND m.minute = intent.call_minute(OLD.approved_at);
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    UPDATE intent.policy_call_minutes m SET calls = m.calls + 1
     WHERE m.policy_id = NEW.policy_id AND m.minute = intent.call_minute(NEW.approved_at);
    IF NOT FOUND THEN
      INSERT INTO intent.policy_call_minutes AS m (policy_id, minute, calls)
      VALUES (NEW.policy_id, intent.call_minute(NEW.approved_at), 1)
      ON CONFLICT (policy_id, minute) DO UPDATE SET calls = m.calls + 1;
    END IF;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER approved_calls_count AFTER INSERT OR DELETE OR UPDATE OF policy_id, approved_at ON intent.approved_calls
  FOR EACH ROW EXECUTE FUNCTION intent.count_approved_call();

-- A TRUNCATE leaves nothing to count.
CREATE FUNCTION intent.forget_counts() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF TG_TABLE_NAME = 'reservations' THEN DELETE FROM intent.policy_day_totals; ELSE DELETE FROM intent.policy_call_minutes; END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER reservations_truncate AFTER TRUNCATE ON intent.reservations FOR EACH STATEMENT EXECUTE FUNCTION intent.forget_counts();
CREATE TRIGGER approved_calls_truncate AFTER TRUNCATE ON intent.approved_calls FOR EACH STATEMENT EXECUTE FUNCTION intent.forget_counts();

-- What exists already.
INSERT INTO intent.policy_day_totals (policy_id, day, active, consumed)
SELECT policy_id, day,
       coalesce(sum(amount) FILTER (WHERE state = 'ACTIVE'), 0),
       coalesce(sum(amount) FILTER (WHERE state = 'CONSUMED'), 0)
  FROM intent.reservations
 WHERE state IN ('ACTIVE', 'CONSUMED')
 GROUP BY policy_id, day;

INSERT INTO intent.policy_call_minutes (policy_id, minute, calls)
SELECT policy_id, intent.call_minute(approved_at), count(*)
  FROM intent.approved_calls
 GROUP BY 1, 2;

-- preflight_window of migration 0003 with the two sums read from the totals; everything else (the
-- lock, the policy, the approval, the cooldown and duplicate reads, the row it returns) unchanged.
CREATE OR REPLACE FUNCTION intent.preflight_window(
  p_policy_id text, p_intent_hash text, p_now timestamptz, p_day date, p_provider text,
  p_known_version integer, p_known_hash text)
RETURNS TABLE (
  policy_found boolean, version integer, status text, policy_hash text, rules jsonb, expires_at timestamptz,
  settled text, reserved text, calls bigint, provider_last_at timestamptz, recent json, approval text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
  v_policy record;
  v_window_minutes integer := 0;
  v_cooldown_minutes integer := 0;
  v_active numeric := 0;
  v_consumed numeric := 0;
  v_lapsed numeric := 0;
  v_boundary timestamptz := intent.call_minute(p_now - interval '1 hour');
BEGIN
  PERFORM pg_advisory_xact_lock(6782, hashtext(p_policy_id));
  SELECT c.version, c.status, c.policy_hash, c.rules, c.expires_at INTO v_policy FROM policy.current_policy(p_policy_id) c;
  policy_found := FOUND;
  IF policy_found THEN
    version := v_policy.version;
    status := v_policy.status;
    policy_hash := v_policy.policy_hash;
    expires_at := v_policy.expires_at;
    IF v_policy.version IS DISTINCT FROM p_known_version OR v_policy.policy_hash IS DISTINCT FROM p_known_hash THEN
      rules := v_policy.rules;
    END IF;
    v_window_minutes := coalesce((v_policy.rules -> 'duplicates' ->> 'windowMinutes')::integer, 0);
    v_cooldown_minutes := coalesce((v_policy.rules -> 'cooldowns' ->> 'sameServiceMinutes')::integer, 0);
    approval := policy.escalation_approval(p_intent_hash);
  END IF;

  SELECT t.active, t.consumed INTO v_active, v_consumed
    FROM intent.policy_day_totals t
   WHERE t.policy_id = p_policy_id AND t.day = p_day;
  SELECT coalesce(sum(r.amount), 0) INTO v_lapsed
    FROM intent.reservations r
   WHERE r.policy_id = p_policy_id AND r.day = p_day AND r.state = 'ACTIVE' AND r.expires_at <= p_now;
  settled := coalesce(v_consumed, 0)::text;
  reserved := (coalesce(v_active, 0) - v_lapsed)::text;

  SELECT coalesce(sum(m.calls), 0) INTO calls
    FROM intent.policy_call_minutes m
   WHERE m.policy_id = p_policy_id AND m.minute > v_boundary;
  calls := calls + (SELECT count(*)
                      FROM intent.approved_calls a
                     WHERE a.policy_id = p_policy_id
                       AND a.approved_at > p_now - interval '1 hour'
                       AND a.approved_at < v_boundary + interval '1 minute');

  IF v_cooldown_minutes > 0 THEN
    SELECT a.approved_at INTO provider_last_at
      FROM intent.approved_calls a
     WHERE a.policy_id = p_policy_id AND a.provider = p_provider
     ORDER BY a.approved_at DESC
     LIMIT 1;
  END IF;

  IF v_window_minutes > 0 THEN
    SELECT json_agg(json_build_array(a.intent_hash, a.capability, a.recipient, a.amount::text, a.item_hash, a.provider,
                                     a.agent_id, a.endpoint, floor(extract(epoch FROM a.approved_at) * 1000)::bigint)
                    ORDER BY a.approved_at DESC, a.decision_id DESC)
      INTO recent
      FROM (SELECT * FROM intent.approved_calls a
             WHERE a.policy_id = p_policy_id AND a.approved_at > p_now - make_interval(mins => v_window_minutes)
             ORDER BY a.approved_at DESC, a.decision_id DESC
             LIMIT 100000) a;
  END IF;
  RETURN NEXT;
END
$$;
