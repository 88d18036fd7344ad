// The answers the SDK reads, typed as far as an agent needs them (docs/rest.md has every field;
// the rest pass through untyped).

export interface StoredIntent {
  readonly intentHash: `0x${string}`;
  readonly [field: string]: unknown;
}

export interface PreflightDecision {
  readonly decision: string;
  readonly intentHash: `0x${string}`;
  readonly receiptId: string;
  readonly escalation?: {
    readonly pollRef: string;
    readonly expiresAt: string;
    readonly pollUrl: string;
  };
  readonly [field: string]: unknown;
}

export interface EscalationStatus {
  readonly pollRef: string;
  readonly state: 'PENDING' | 'APPROVED' | 'DENIED' | 'EXPIRED';
  readonly outcome: 'APPROVED' | 'DENIED' | null;
  readonly reason: string | null;
  readonly intentHash: `0x${string}`;
  readonly [field: string]: unknown;
}

export interface ConsumerIntentView {
  readonly intentId: string;
  readonly state: string;
  readonly [field: string]: unknown;
}

export interface CreatedPurchase {
  readonly intent: ConsumerIntentView;
  readonly quote: unknown;
  readonly decision: unknown;
  readonly nextAction: 'FUND' | 'AWAIT_APPROVAL' | 'NONE';
  readonly fundingRequest: {
    readonly method: 'POST';
    readonly path: string;
    readonly network: string;
    readonly asset: string;
    readonly amount: string;
    readonly payTo: string;
  } | null;
}
