// What an escalation's state says to its owner: the outcome and the reason shown beside it. One
// mapping for every reader (the policy subgraph's Escalation, the poll route, the live
// escalationUpdated events), so a state never reads two ways. EXPIRED reports DENIED with the
// fail-closed reason (DECISIONS "Escalation").

export type EscalationState = 'PENDING' | 'APPROVED' | 'DENIED' | 'EXPIRED';

export const ESCALATION_STATES: readonly EscalationState[] = [
  'PENDING',
  'APPROVED',
  'DENIED',
  'EXPIRED',
];

export const EXPIRED_REASON = 'ESCALATION_EXPIRED_DEFAULT_DENY';

export function isEscalationState(value: unknown): value is EscalationState {
  return typeof value === 'string' && (ESCALATION_STATES as readonly string[]).includes(value);
}

export function outcomeOf(state: EscalationState): 'APPROVED' | 'DENIED' | null {
  if (state === 'APPROVED') return 'APPROVED';
  return state === 'PENDING' ? null : 'DENIED';
}

export function reasonOf(state: EscalationState): string | null {
  switch (state) {
    case 'PENDING':
      return null;
    case 'APPROVED':
      return 'OWNER_APPROVED';
    case 'DENIED':
      return 'OWNER_DENIED';
    case 'EXPIRED':
      return EXPIRED_REASON;
  }
}
