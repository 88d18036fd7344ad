-- At most one ACTIVE reservation per intentHash. 1,000 aliased preflightPayment mutations of one
-- intent made 1,101 reservations: with the duplicate window off (or once it had passed), every
-- repeat of an approved intent reserved the budget again. A repeat is now answered with the
-- decision that holds the reservation (migration 0011, docs/engine.md "A repeated preflight"),
-- and this index refuses a second ACTIVE reservation whatever path writes it. A new reservation of
-- the same intent is possible only once the first has left ACTIVE (consumed, released, expired).
--
-- Repeats already reserved: the earliest approval keeps its reservation, the later ones are
-- RELEASED (the authority they held goes back to the budget; none can have been consumed, since
-- they are ACTIVE).

UPDATE intent.reservations r
   SET state = 'RELEASED', updated_at = greatest(r.updated_at, now())
 WHERE r.state = 'ACTIVE'
   AND EXISTS (SELECT 1 FROM intent.reservations earlier
                WHERE earlier.intent_hash = r.intent_hash AND earlier.state = 'ACTIVE'
                  AND (earlier.created_at, earlier.reservation_id) < (r.created_at, r.reservation_id));

CREATE UNIQUE INDEX reservations_one_active_per_intent ON intent.reservations (intent_hash) WHERE state = 'ACTIVE';
