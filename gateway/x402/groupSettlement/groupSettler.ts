// Group settlement of x402 payments, the way databases group commits: authorizations that arrive
// while a group transaction is being handed to the node wait and go together in the next one (at
// most maxSize, waiting at most maxWaitMs for company when nothing is in flight), through our
// GroupSettlement contract (platform/chain/settlementContract). Groups overlap: the next may go
// before the last one's receipt (see `handed`). One transaction and one receipt wait per group;
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
/** See GroupSettlementOptions.overlapAfterMs. */
export const DEFAULT_GROUP_OVERLAP_MS = 50;

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

/** One group between its start and the moment the next one may go. */
interface Turn {
  /** The node has answered this group's send (or nothing was sent). */
  handed: boolean;
  /** The next group may go. */
  over: boolean;
  overlapTimer: NodeJS.Timeout | null;
  /** Resolves once the next group may go. */
  readonly released: Promise<void>;
  readonly release: () => void;
}

export class GroupSettler {
  private readonly queue: Waiting[] = [];
  /** Authorizations queued or in flight, by payer and nonce: never in two groups at once. */
  private readonly claimed = new Map<string, Promise<Settlement>>();
  private timer: NodeJS.Timeout | null = null;
  /** The last group started, until the next one may go. */
  private turn: Turn | null = null;
  /** Groups started whose members do not know their outcome yet. */
  private readonly settling = new Set<Promise<unknown>>();
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
    if (this.turn) {
      // Behind a group in flight: a full group waiting goes as soon as that one is handed.
      if (this.turn.handed && this.queue.length >= this.options.maxSize) this.turn.release();
      return;
    }
    if (this.queue.length >= this.options.maxSize || this.options.maxWaitMs <= 0) {
      this.startGroup();
      return;
    }
    this.timer ??= setTimeout(() => this.startGroup(), this.options.maxWaitMs);
  }

  private startGroup(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.turn || this.queue.length === 0) return;
    const group = this.queue.splice(0, this.options.maxSize);
    this.stats.groups += 1;
    this.stats.authorizations += group.length;
    const members = group.map((waiting) => waiting.member);
    const turn = this.newTurn();
    this.turn = turn;
    void turn.released.then(() => {
      this.turn = null;
      // Whoever arrived meanwhile has waited a whole group already: they go at once.
      if (this.queue.length > 0) this.startGroup();
    });
    const sent = this.relayer
      .send(
        members.map((member) => member.authorization),
        () => this.handed(turn),
      )
      .catch(() => ({ kind: 'unknown' as const, txHash: null }));
    // Once this group's receipt is read (or its outcome is unknown), the next one goes at once.
    void sent.finally(() => turn.release());
    const told = sent.then((outcome) => {
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
    this.settling.add(told);
    void told.finally(() => this.settling.delete(told));
  }

  private newTurn(): Turn {
    let resolve!: () => void;
    const released = new Promise<void>((done) => (resolve = done));
    const turn: Turn = {
      handed: false,
      over: false,
      overlapTimer: null,
      released,
      release: () => {
        turn.over = true;
        if (turn.overlapTimer) clearTimeout(turn.overlapTimer);
        turn.overlapTimer = null;
        resolve();
      },
    };
    return turn;
  }

  /**
   * The node has answered the group's send: its nonce is spent, so the next group may be signed
   * under the next one while this one waits for its receipt. It goes when a full group waits, or
   * after the overlap delay: on a node that mines on arrival the receipt comes first and groups
   * stay as large as before; on a chain with blocks several groups share a block instead of one
   * group per block.
   */
  private handed(turn: Turn): void {
    if (turn.handed || turn.over) return;
    turn.handed = true;
    if (this.queue.length >= this.options.maxSize) return turn.release();
    const overlapMs = this.options.overlapAfterMs ?? DEFAULT_GROUP_OVERLAP_MS;
    turn.overlapTimer = setTimeout(turn.release, overlapMs);
  }

  /** Waits until every group started or queued has been sent and its members know their outcome. */
  async drain(): Promise<void> {
    while (this.turn || this.queue.length > 0 || this.settling.size > 0) {
      if (!this.turn && this.queue.length > 0) this.startGroup();
      await (this.turn?.released ?? Promise.all(this.settling));
    }
  }
}
