// What the chain's facts say about one signed EIP-3009 authorization: PAID when the transaction
// that used it moved exactly the expected Transfer; NOT_PAID only on proof it can never move money
// (unused at a block whose time is at or past validBefore: the token refuses it from then on, for
// good; or spent by a transaction found by its event that does not carry the expected Transfer);
// OPEN otherwise. Pure: the facts are read elsewhere (platform/chain/eip3009Facts), all at one block.

/** What the receipt of the transaction that used the authorization shows, as of the pinned block. */
export type UseReceipt =
  /** Succeeded and carries the expected Transfer. */
  | 'PAYS'
  /** Succeeded without the expected Transfer (another transfer, a cancellation). */
  | 'PAYS_SOMETHING_ELSE'
  /** No receipt (yet, or not as of the pinned block), reverted, or not readable. */
  | 'UNREADABLE';

export interface AuthorizationUseFacts {
  readonly txHash: string;
  /** True when the token's AuthorizationUsed/Canceled event names it; false for a recorded guess. */
  readonly foundByEvent: boolean;
  readonly receipt: UseReceipt;
}

/** What the chain says at the pinned block; a used authorization is judged without the clock. */
export type AuthorizationFacts =
  | {
      /** authorizationState at the pinned block: neither used nor canceled. */
      readonly used: false;
      /** The pinned block's timestamp (seconds): the clock EIP-3009 windows are judged by. */
      readonly chainTimeS: bigint;
      /** The authorization's validBefore (seconds): usable strictly before it. */
      readonly validBefore: bigint;
    }
  | {
      /** authorizationState at the pinned block: used or canceled. */
      readonly used: true;
      /** The transaction that used it, if one was found. */
      readonly use?: AuthorizationUseFacts;
    };

export type AuthorizationJudgement =
  | { readonly status: 'PAID'; readonly txHash: string }
  | { readonly status: 'NOT_PAID'; readonly because: 'EXPIRED_UNUSED' }
  | {
      readonly status: 'NOT_PAID';
      readonly because: 'USED_BY_OTHER_TRANSACTION';
      readonly usedByTxHash: string;
    }
  | { readonly status: 'OPEN'; readonly because: 'STILL_USABLE' | 'USE_NOT_READABLE' };

export function judgeAuthorization(facts: AuthorizationFacts): AuthorizationJudgement {
  if (!facts.used)
    return facts.chainTimeS >= facts.validBefore
      ? { status: 'NOT_PAID', because: 'EXPIRED_UNUSED' }
      : { status: 'OPEN', because: 'STILL_USABLE' };
  const use = facts.use;
  if (use?.receipt === 'PAYS') return { status: 'PAID', txHash: use.txHash };
  if (use?.foundByEvent === true && use.receipt === 'PAYS_SOMETHING_ELSE')
    return { status: 'NOT_PAID', because: 'USED_BY_OTHER_TRANSACTION', usedByTxHash: use.txHash };
  return { status: 'OPEN', because: 'USE_NOT_READABLE' };
}
