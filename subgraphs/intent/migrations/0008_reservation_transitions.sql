-- A reservation's life in the database itself, not only in settlement.ts and the sweep: it is
-- born ACTIVE and leaves ACTIVE once, to CONSUMED (settled), RELEASED (given back) or EXPIRED
-- (lapsed, swept); those three are final. What it reserved (decision, intent, policy, amount,
-- asset, day, deadline) never changes. Anything else raises IN002, so no bug and no hand-written
-- UPDATE can revive a settled or lapsed reservation into the budget, or change what it holds.

CREATE FUNCTION intent.guard_reservation_update() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF NEW.state IS DISTINCT FROM OLD.state AND OLD.state <> 'ACTIVE' THEN
    RAISE EXCEPTION 'reservation % is %; it cannot become %', OLD.reservation_id, OLD.state, NEW.state
      USING ERRCODE = 'IN002';
  END IF;
  IF NEW.reservation_id IS DISTINCT FROM OLD.reservation_id OR NEW.decision_id IS DISTINCT FROM OLD.decision_id
     OR NEW.intent_hash IS DISTINCT FROM OLD.intent_hash OR NEW.policy_id IS DISTINCT FROM OLD.policy_id
     OR NEW.amount IS DISTINCT FROM OLD.amount OR NEW.asset IS DISTINCT FROM OLD.asset
     OR NEW.day IS DISTINCT FROM OLD.day OR NEW.expires_at IS DISTINCT FROM OLD.expires_at
     OR NEW.created_at IS DISTINCT FROM OLD.created_at THEN
    RAISE EXCEPTION 'reservation % changes only its state, settlement and update time', OLD.reservation_id
      USING ERRCODE = 'IN002';
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER reservations_guard BEFORE UPDATE ON intent.reservations
  FOR EACH ROW EXECUTE FUNCTION intent.guard_reservation_update();
