-- One index per question the window asks of the reservations, so the planner has no wrong one to
-- pick. The window subtracts the ACTIVE reservations already past their deadline
-- (`policy_id, day, state = 'ACTIVE', expires_at <= now`), which reservations_active_deadline
-- (0005) answers by reading only the lapsed ones. But reservations_window (0002) on
-- (policy_id, day, state) answers it too, reading every ACTIVE reservation of the policy's day and
-- filtering on expires_at; under a generic plan (PL/pgSQL caches them; `now` is a parameter) both
-- looked equally cheap, and a hot policy's decisions got slower with each reservation of the day
-- (measured: 12,704 rows read for none lapsed, 4 ms per decision by the end of a bench run).
--
-- reservations_window served only the raw sums, whose two states have indexes of their own now:
-- CONSUMED (settled today) below, and ACTIVE through reservations_active_deadline's
-- (policy_id, day) prefix.

DROP INDEX intent.reservations_window;
CREATE INDEX reservations_consumed ON intent.reservations (policy_id, day) WHERE state = 'CONSUMED';
