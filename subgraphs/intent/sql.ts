// The intent subgraph's custom SQLSTATEs (ERRCODE 'INnnn' in migrations/) and the error codes
// clients see for them. Ledger errors raised through ledger.post_group inside an intent
// transaction keep the ledger's own map (ledgerErrorFrom of subgraphs/ledger).
import { DEFECT, type SqlStateMap } from '../kit';

/**
 * IN001: intent.preflight_record could not take the owner approval it was to use (used
 * concurrently; migration 0003). The batch runner rolls back and answers it as this code.
 */
export const APPROVAL_LOST_SQLSTATE = 'IN001';

export const INTENT_SQLSTATES: SqlStateMap = {
  [APPROVAL_LOST_SQLSTATE]: 'INTERNAL_ERROR',
  // A reservation moved out of a state it may not leave (migrations 0008, 0009).
  IN002: 'ILLEGAL_STATE_TRANSITION',
  // consume_reservation refused the ledger groups (migration 0009).
  IN003: 'RESERVATION_SETTLEMENT_INVALID',
  // A consumer intent moved outside the lifecycle table, or changed what it is (migration 0014).
  IN004: 'ILLEGAL_STATE_TRANSITION',
  // A payment capability changed what it allows, or was redeemed or signed twice (migration 0014).
  IN005: 'ILLEGAL_STATE_TRANSITION',
  // A consumer receipt deleted, changed once final, or not written with its intent's change
  // (migration 0016): only our own broken code trips it.
  IN006: DEFECT,
  // An anchor leaf or batch deleted, re-batched or changed once settled (migration 0017): only
  // our own broken code trips it.
  IN007: DEFECT,
};
