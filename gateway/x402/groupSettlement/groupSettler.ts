// Group settlement of x402 payments, the way databases group commits: authorizations that arrive
// while a group transaction is in flight wait and go together in the next one (at most maxSize,
// waiting at most maxWaitMs for company when nothing is in flight), through our GroupSettlement
// contract (platform/chain/settlementContract). One transaction and one receipt wait per group;
// each member learns its own outcome from chain truth in that receipt: the token's
// AuthorizationUsed for its (payer, nonce) paired with the Transfer it made. An authorization is in
// at most one group: a second submission of one already queued or in flight joins its outcome.
// Verification (signature, window, balance, nonce unused, by simulation) happens before a member
// is queued, in the rail, so a doomed authorization is refused without any send.
import type { PaymentPayload } from '@x402/core/types';
import type { Address, Hex } from 'viem';
import type { GroupAuthorization, GroupRelayer } from '../../../platform/chain/settlementContract';
import type { Settlement } from '../settlement';
import type { GroupMember, GroupSettlementOptions } from './types';
import { memberSettlements } from './memberOutcome';

export const DEFAULT_GROUP_MAX_SIZE = 64;
export const DEFAULT_GROUP_MAX_WAIT_MS = 2;

interface Waiting {
  readonly member: GroupMember;
  readonly resolve: (settlement: Settlement) => void;
}

/** The authorization of an `exact` EIP-3009 payload with a plain 65-byte signature; null otherwise. */
export function groupAuthorizationOf(payload: PaymentPayload): GroupAuthorization | null {
  const raw = payload.payload as {
    authorization?: Record<string, string>;
    signature?: string;
  };
  const auth = raw.authorization;
  const signature = raw.signature;
  if (!auth || typeof signature !== 'string' || !/^0x[0-9a-fA-F]{130}$/.test(signature))
    return null;
  return {
    from: auth.from as Address,
    to: auth.to as Address,
    value: BigInt(auth.value),
    validAfter: BigInt(auth.validAfter),
    validBefore: BigInt(auth.validBefore),
    nonce: auth.nonce as Hex,
    signature: signature as Hex,
  };
}

export class GroupSettler {
  private readonly queue: Waiting[] = [];
  /** Authorizations queued or in flight, by payer and nonce: never in two groups at once. */
  private readonly claimed = new Map<string, Promise<Settlement>>();
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> | null = null;
  /** Groups sent and the authorizations they carried, for the bench and tests. */
  readonly stats = { groups: 0, authorizations: 0 };

  constructor(
    private readonly relayer: GroupRelayer,
    private readonly token: Address,
    private readonly options: GroupSettlementOptions,
  ) {}

  /** Settles one verified authorization in the next group; resolves with its own outcome. */
  submit(member: GroupMember): Promise<Settlement> {
    const key = `${member.authorization.from.toLowerCase()}:${member.authorization.nonce.toLowerCase()}`;
    const joined = this.claimed.get(key);
    if (joined) return joined;
    const outcome = new Promise<Settlement>((resolve) => this.queue.push({ member, resolve }));
    this.claimed.set(key, outcome);
    void outcome.finally(() => this.claimed.delete(key));
    this.schedule();
    return outcome;
  }

  private schedule(): void {
    if (this.inFlight) return; // the group in flight starts the next one when it ends
    if (this.queue.length >= this.options.maxSize || this.options.maxWaitMs <= 0) {
      this.startGroup();
      return;
    }
    this.timer ??= setTimeout(() => this.startGroup(), this.options.maxWaitMs);
  }

  private startGroup(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.inFlight || this.queue.length === 0) return;
    const group = this.queue.splice(0, this.options.maxSize);
    this.stats.groups += 1;
    this.stats.authorizations += group.length;
    const members = group.map((waiting) => waiting.member);
    const sent = this.relayer
      .send(members.map((member) => member.authorization))
      .catch(() => ({ kind: 'unknown' as const, txHash: null }));
    // The group is out of the way once the chain has answered: the next one starts then, and this
    // one's receipt is read for its members meanwhile (the next send waits on the node anyway).
    this.inFlight = sent.then(
      () => undefined,
      () => undefined,
    );
    void this.inFlight.finally(() => {
      this.inFlight = null;
      // Whoever arrived meanwhile has waited a whole group already: they go at once.
      if (this.queue.length > 0) this.startGroup();
    });
    void sent.then((outcome) => {
      const addresses = { token: this.token, contract: this.options.contract };
      let settlements: Settlement[];
      try {
        settlements = memberSettlements(outcome, members, addresses);
      } catch {
        // A receipt this code cannot read decides nothing: every member is parked and the chain decides.
        const txHash = 'txHash' in outcome ? outcome.txHash : null;
        settlements = memberSettlements({ kind: 'unknown', txHash }, members, addresses);
      }
      group.forEach((waiting, index) => waiting.resolve(settlements[index]!));
    });
  }

  /** Waits for the group in flight (and those queued behind it) to finish. */
  async drain(): Promise<void> {
    while (this.inFlight || this.queue.length > 0) {
      if (!this.inFlight) this.startGroup();
      await this.inFlight;
    }
  }
}
