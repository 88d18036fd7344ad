// The shapes group settlement passes around: its config and one queued member.
import type { PaymentRequirements } from '@x402/core/types';
import type { Address } from 'viem';
import type { GroupAuthorization } from '../../../platform/chain/settlementContract';

export interface GroupSettlementOptions {
  /** The GroupSettlement contract on the funding chain (X402_GROUP_SETTLEMENT_ADDRESS). */
  readonly contract: Address;
  /** At most this many authorizations in one transaction (X402_GROUP_MAX_SIZE). */
  readonly maxSize: number;
  /** How long a first arrival waits for company while no group is in flight (X402_GROUP_MAX_WAIT_MS). */
  readonly maxWaitMs: number;
  /**
   * How long after a group was handed to the node the next one may go before the first one's
   * receipt (X402_GROUP_OVERLAP_MS; absent: DEFAULT_GROUP_OVERLAP_MS). The next group goes at the
   * first of: the last one's receipt read, a full group waiting, this long since the hand-over.
   */
  readonly overlapAfterMs?: number;
}

/** One queued authorization: what the group sends and what its outcome is judged against. */
export interface GroupMember {
  readonly authorization: GroupAuthorization;
  readonly requirements: PaymentRequirements;
  readonly network: string;
}
