// What one group transaction means for each of its members, in the paywall's terms (a Settlement):
// - mined, and the receipt shows this authorization's AuthorizationUsed paired with its Transfer
//   (payer → payTo, the price): paid, confirmed by chain truth (the paywall books without a
//   second receipt read);
// - mined without it: the token refused this one inside the group and nothing of it moved. Refused
//   (402, claim released) only when the token's reason proves it can never move money (nonce
//   already used: then "did an earlier use pay us?" as today; expired); otherwise (balance,
//   signature, not yet valid) parked as a reverted single settlement, for the chain to decide;
// - reverted as a whole (also when no member settled, so a group of one behaves as a single
//   settlement): parked, as a reverted single settlement (the signed authorization stays usable
//   until validBefore, so the chain decides);
// - unknown (no receipt in time, an answer lost): parked with the hash, as a single settlement;
// - unsent (provably never handed to the node): nothing moved and nothing can; the claim is freed
//   and the payer presents the same payment again (`unsent`).
import type { Address, Hex, TransactionReceipt } from 'viem';
import {
  type AuthorizationTransfer,
  authorizationTransfersInReceipt,
} from '../../../platform/chain/eip3009Facts';
import {
  type GroupAttempt,
  type GroupSendOutcome,
  groupAttemptsInReceipt,
} from '../../../platform/chain/settlementContract';
import type { Settlement } from '../settlement';
import type { GroupMember } from './types';

const TRANSACTION_FAILED = 'invalid_exact_evm_transaction_failed';
const SETTLEMENT_PENDING = 'settlement_pending';
const SETTLEMENT_NOT_SENT = 'settlement_not_sent';

/** The token's custom errors (contracts/src/Eip3009Token.sol, OpenZeppelin ERC20) → x402 reasons. */
const REASON_BY_SELECTOR: Readonly<Record<string, string>> = {
  // InvalidSignature()
  '0x8baa579f': 'invalid_exact_evm_signature',
  // AuthorizationAlreadyUsed(address,bytes32)
  '0xd309466d': 'invalid_exact_evm_nonce_already_used',
  // ERC20InsufficientBalance(address,uint256,uint256)
  '0xe450d38c': 'invalid_exact_evm_insufficient_balance',
  // AuthorizationExpired(uint256)
  '0x3d91b05f': 'invalid_exact_evm_payload_authorization_valid_before',
  // AuthorizationNotYetValid(uint256)
  '0x7a4df079': 'invalid_exact_evm_payload_authorization_valid_after',
};

/** Token refusals after which the authorization can never move money (chain-proven). */
const PERMANENT_REFUSALS = new Set([
  'invalid_exact_evm_nonce_already_used',
  'invalid_exact_evm_payload_authorization_valid_before',
]);

interface GroupAddresses {
  readonly token: Address;
  readonly contract: Address;
}

export function memberSettlements(
  outcome: GroupSendOutcome,
  members: readonly GroupMember[],
  addresses: GroupAddresses,
): Settlement[] {
  // A mined group's receipt is read once for all its members, not once per member.
  const facts = outcome.kind === 'mined' ? receiptFacts(outcome.receipt, addresses) : null;
  return members.map((member) => memberSettlement(outcome, facts, member));
}

/** A mined group receipt's token uses and the contract's attempts, by `payer:nonce` (lower case). */
interface ReceiptFacts {
  readonly uses: ReadonlyMap<string, AuthorizationTransfer>;
  readonly attempts: ReadonlyMap<string, GroupAttempt>;
}

function receiptFacts(receipt: TransactionReceipt, addresses: GroupAddresses): ReceiptFacts {
  const uses = new Map<string, AuthorizationTransfer>();
  for (const used of authorizationTransfersInReceipt(receipt, addresses.token)) {
    const key = `${used.authorizer}:${used.nonce}`;
    if (!uses.has(key)) uses.set(key, used);
  }
  const attempts = new Map<string, GroupAttempt>();
  for (const tried of groupAttemptsInReceipt(receipt, addresses.contract)) {
    const key = `${tried.authorizer}:${tried.nonce}`;
    if (!attempts.has(key)) attempts.set(key, tried);
  }
  return { uses, attempts };
}

function memberSettlement(
  outcome: GroupSendOutcome,
  facts: ReceiptFacts | null,
  member: GroupMember,
): Settlement {
  const base = {
    network: member.network as Settlement['network'],
    payer: member.authorization.from,
  };
  switch (outcome.kind) {
    case 'unsent':
      return {
        ...base,
        success: false,
        errorReason: SETTLEMENT_NOT_SENT,
        transaction: '',
        broadcast: false,
        unsent: true,
      };
    case 'unknown':
      return {
        ...base,
        success: false,
        errorReason: SETTLEMENT_PENDING,
        transaction: outcome.txHash ?? '',
        broadcast: true,
      };
    case 'reverted':
      return {
        ...base,
        success: false,
        errorReason: TRANSACTION_FAILED,
        transaction: outcome.txHash,
        broadcast: true,
      };
    case 'mined':
      return minedSettlement(facts!, outcome.txHash, member, base);
  }
}

function minedSettlement(
  facts: ReceiptFacts,
  txHash: Hex,
  member: GroupMember,
  base: Pick<Settlement, 'network' | 'payer'>,
): Settlement {
  const auth = member.authorization;
  const payer = auth.from.toLowerCase();
  const key = `${payer}:${auth.nonce.toLowerCase()}`;
  const use = facts.uses.get(key);
  if (use) {
    const paysUs =
      use.transfer.from === payer &&
      use.transfer.to === member.requirements.payTo.toLowerCase() &&
      use.transfer.value === BigInt(member.requirements.amount);
    if (paysUs)
      return { ...base, success: true, transaction: txHash, broadcast: true, confirmed: true };
    // Used, but not paying what was offered: cannot happen for a verified authorization; the chain decides.
    return {
      ...base,
      success: false,
      errorReason: SETTLEMENT_PENDING,
      transaction: txHash,
      broadcast: true,
    };
  }
  const reason = refusalReason(facts.attempts.get(key));
  if (PERMANENT_REFUSALS.has(reason))
    return { ...base, success: false, errorReason: reason, transaction: '', broadcast: false };
  // Nothing of it moved here, but the signed authorization may still move money: the chain decides.
  return { ...base, success: false, errorReason: reason, transaction: txHash, broadcast: true };
}

function refusalReason(attempt: GroupAttempt | undefined): string {
  if (!attempt) return TRANSACTION_FAILED;
  return REASON_BY_SELECTOR[attempt.reason.toLowerCase()] ?? TRANSACTION_FAILED;
}
