// The policy subgraph's custom SQLSTATEs, mapped to the AppError codes clients see. Its migrations
// raise none today: every RAISE there (open_escalation's guards, the append-only and immutability
// triggers) takes PostgreSQL's default P0001, so this map is empty until a migration adds a code.
import type { SqlStateMap } from '../kit';

export const POLICY_SQLSTATES: SqlStateMap = {};
