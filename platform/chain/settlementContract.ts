// Our GroupSettlement contract (contracts/src/GroupSettlement.sol): its deployment, and the relayer
// that sends one group of EIP-3009 authorizations through it per transaction. The relayer takes its
// account nonce from the process's relayer nonces (relayerNonces.ts: kept in memory, shared with
// every other sender of the key in the process, read from the chain again after a nonce error or
// an outcome it could not see), gives each group a gas limit computed from its size (no
// eth_estimateGas), reuses fee quotes briefly, signs locally (so the hash is known before the send,
// even when the node's answer is lost) and waits for the receipt once per group. What the receipt
// means for each authorization is read by the caller (eip3009Facts).
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Address,
  type Hex,
  type TransactionReceipt,
  encodeFunctionData,
  hexToBytes,
} from 'viem';
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { groupSettlementAbi, groupSettlementBytecode } from '../../contracts/artifacts/abis';
import {
  type ChainEndpoint,
  type ChainPublicClient,
  type ChainWalletClient,
  createChainPublicClient,
  createChainWalletClient,
} from './clients';
import { type Deployment, deployArtifact } from './deploy';
import { readReceipt } from './eip3009Facts';
import { relayerNonces } from './relayerNonces';
import { abiEvent, eventWordsDecoder } from './eventWords';
import { transactionSigner } from './secp256k1';
import { keccak256Hex } from '../../core/canon/keccak';
import type { TransferAuthorizationMessage } from './tokens';

/** One signed transfer authorization, as the contract takes it (bytes signature form). */
export interface GroupAuthorization extends TransferAuthorizationMessage {
  readonly signature: Hex;
}

/** What became of one group transaction, as far as the relayer could see. */
export type GroupSendOutcome =
  | { readonly kind: 'mined'; readonly txHash: Hex; readonly receipt: TransactionReceipt }
  | { readonly kind: 'reverted'; readonly txHash: Hex }
  /** No receipt in time, or the send failed in a way that does not prove the node refused it. */
  | { readonly kind: 'unknown'; readonly txHash: Hex | null }
  /**
   * Provably never handed to the node: the reads before signing (nonce, fees) failed, or the node
   * refused the transaction's nonce and does not know its hash. Nothing of the group can move.
   */
  | { readonly kind: 'unsent' };

/** One AuthorizationSettled event of the contract: the attempt at one authorization. */
export interface GroupAttempt {
  readonly authorizer: string;
  readonly nonce: string;
  readonly settled: boolean;
  /** The token's revert selector when the attempt failed ('0x00000000' when it gave none). */
  readonly reason: Hex;
}

/** Base cost of the group transaction, and a generous bound per authorization (a use costs ~60k). */
const GROUP_BASE_GAS = 60_000n;
const GAS_PER_AUTHORIZATION = 160_000n;
/** A transaction whose send lost its answer is handed to the node again at most this often. */
const REBROADCAST_EVERY_MS = 250;
/** The first receipt poll after a send waits this long; each next one twice as long, up to the polling interval. */
const FIRST_RECEIPT_POLL_MS = 2;
/** Fee quotes are reused this long: one group after another needs no fresh quote. */
const FEE_QUOTE_TTL_MS = 2_000;

export function deployGroupSettlement(
  publicClient: ChainPublicClient,
  walletClient: ChainWalletClient,
): Promise<Deployment> {
  return deployArtifact({
    publicClient,
    walletClient,
    contractName: 'GroupSettlement',
    abi: groupSettlementAbi,
    bytecode: groupSettlementBytecode,
    args: [],
  });
}

/** The gas limit of a group of `size`: above MIN_GAS_PER_AUTHORIZATION for each, so no attempt starves. */
export function groupGasLimit(size: number): bigint {
  return GROUP_BASE_GAS + GAS_PER_AUTHORIZATION * BigInt(size);
}

const decodeAttempt = eventWordsDecoder(abiEvent(groupSettlementAbi, 'AuthorizationSettled'));

/** The contract's AuthorizationSettled events in a group receipt, in order. */
export function groupAttemptsInReceipt(
  receipt: TransactionReceipt,
  contract: Address,
): GroupAttempt[] {
  const own = contract.toLowerCase();
  return receipt.logs.flatMap((log) => {
    const fields = log.address.toLowerCase() === own ? decodeAttempt(log) : null;
    if (!fields) return [];
    return [
      {
        authorizer: fields.authorizer as string,
        nonce: fields.nonce as string,
        settled: fields.settled as boolean,
        reason: fields.reason as Hex,
      },
    ];
  });
}

export interface GroupRelayerOptions extends ChainEndpoint {
  readonly relayerPrivateKey: Hex;
  readonly contract: Address;
  readonly token: Address;
  /** How long a group waits for its receipt before its outcome counts as unknown. */
  readonly confirmationTimeoutMs: number;
  readonly pollingIntervalMs?: number;
}

export interface GroupRelayer {
  readonly relayer: Address;
  /**
   * Sends one group transaction and waits for its receipt; never throws (a failure is 'unknown').
   * `onHanded` is called once, as soon as the node has answered the send (or nothing was sent):
   * the next group may then be signed under the next nonce while this one waits for its receipt.
   */
  send(
    authorizations: readonly GroupAuthorization[],
    onHanded?: () => void,
  ): Promise<GroupSendOutcome>;
}

const NONCE_REFUSAL = /nonce too low|nonce too high|invalid nonce|nonce has already been used/i;

export function createGroupRelayer(options: GroupRelayerOptions): GroupRelayer {
  const clientOptions = { pollingIntervalMs: options.pollingIntervalMs };
  const publicClient = createChainPublicClient(options, clientOptions);
  const account: PrivateKeyAccount = privateKeyToAccount(options.relayerPrivateKey);
  // The group transaction is signed through libsecp256k1 (same bytes as the account's own signer).
  const signTransaction = transactionSigner(options.relayerPrivateKey);
  const wallet = createChainWalletClient(options, account, clientOptions);
  const state = new RelayerState(publicClient, account.address, options.chainId);
  const pollMs = options.pollingIntervalMs ?? 100;
  const waitFor = (signed: SignedGroup, sent: 'SENT' | 'ANSWER_LOST') =>
    awaitGroupReceipt(publicClient, wallet, state, {
      txHash: signed.txHash,
      raw: sent === 'ANSWER_LOST' ? signed.serialized : null,
      timeoutMs: options.confirmationTimeoutMs,
      pollMs,
    });

  const sign = async (authorizations: readonly GroupAuthorization[], nonce: number) => {
    const fees = await state.fees();
    const data = encodeFunctionData({
      abi: groupSettlementAbi,
      functionName: 'settle',
      args: [options.token, authorizations.map((item) => ({ ...item }))],
    });
    const serialized = signTransaction({
      chainId: options.chainId,
      type: 'eip1559',
      to: options.contract,
      data,
      nonce,
      gas: groupGasLimit(authorizations.length),
      ...fees,
    });
    return { serialized, txHash: keccak256Hex(hexToBytes(serialized)) };
  };

  return {
    relayer: account.address,
    async send(authorizations, onHanded) {
      const handed = handGroup({
        sign: (nonce) => sign(authorizations, nonce),
        wallet,
        publicClient,
        state,
      });
      // However the hand-over ended (an error included), the next group may go.
      void handed.finally(() => onHanded?.()).catch(() => undefined);
      const outcome = await handed;
      return outcome.kind === 'unsent' ? outcome : waitFor(outcome.signed, outcome.sent);
    },
  };
}

type SignedGroup = { serialized: Hex; txHash: Hex };

type HandOver =
  { kind: 'unsent' } | { kind: 'handed'; signed: SignedGroup; sent: 'SENT' | 'ANSWER_LOST' };

/** Signs and hands a group to the node: its nonce is spent from then on, unless unsent. */
async function handGroup(relaying: {
  sign(nonce: number): Promise<SignedGroup>;
  wallet: ChainWalletClient;
  publicClient: ChainPublicClient;
  state: RelayerState;
}): Promise<HandOver> {
  const { sign, wallet, publicClient, state } = relaying;
  let signed: SignedGroup;
  try {
    signed = await sign(await state.nonce());
  } catch {
    // Nothing was handed to the node; the next group reads nonce and fees afresh.
    state.forgetNonce();
    return { kind: 'unsent' };
  }
  const sent = await sendOnce(wallet, publicClient, signed, state);
  if (sent !== 'NONCE_REFUSED') return { kind: 'handed', signed, sent };
  // Refused for its nonce and unknown to the node: never accepted, so it may go again under the
  // chain's current nonce (the authorizations themselves can be used once only anyway).
  const again = await sign(await state.nonce()).catch(() => null);
  if (!again) return { kind: 'unsent' };
  const resent = await sendOnce(wallet, publicClient, again, state);
  if (resent === 'NONCE_REFUSED') return { kind: 'unsent' };
  return { kind: 'handed', signed: again, sent: resent };
}

/**
 * Waits for the group's receipt. `raw` set: the send's answer was lost (a dropped connection, a
 * timeout), so the node may or may not hold the transaction, and the same signed transaction is
 * handed to it again (at most every REBROADCAST_EVERY_MS) until it holds it. That is idempotent
 * (one hash, one nonce: mined at most once), so an outage shorter than the wait ends with the
 * group mined, not parked. The polls start quick and double up to `pollMs`: a node that mines on
 * arrival (a devnet) has the receipt a moment after the send, and every caller in the group waits
 * for it, so the first miss must not cost a whole polling interval.
 */
async function awaitGroupReceipt(
  publicClient: ChainPublicClient,
  wallet: ChainWalletClient,
  state: RelayerState,
  sent: { txHash: Hex; raw: Hex | null; timeoutMs: number; pollMs: number },
): Promise<GroupSendOutcome> {
  const { txHash } = sent;
  const deadline = Date.now() + sent.timeoutMs;
  let unconfirmedRaw = sent.raw;
  let handedAt = Date.now();
  let delayMs = Math.min(FIRST_RECEIPT_POLL_MS, sent.pollMs);
  for (;;) {
    const receipt = await readReceipt(publicClient, txHash).catch(() => undefined);
    if (receipt)
      return receipt.status === 'success'
        ? { kind: 'mined', txHash, receipt }
        : { kind: 'reverted', txHash };
    if (Date.now() >= deadline) {
      state.forgetNonce();
      return { kind: 'unknown', txHash };
    }
    if (unconfirmedRaw !== null && Date.now() - handedAt >= REBROADCAST_EVERY_MS) {
      handedAt = Date.now();
      if (await rebroadcast(wallet, unconfirmedRaw)) unconfirmedRaw = null;
    }
    await sleep(delayMs);
    delayMs = Math.min(delayMs * 2, sent.pollMs);
  }
}

/** Hands `raw` to the node again; true once the node holds it (accepted, already known or mined). */
async function rebroadcast(wallet: ChainWalletClient, raw: Hex): Promise<boolean> {
  try {
    await wallet.sendRawTransaction({ serializedTransaction: raw });
    return true;
  } catch (error) {
    // "already known" / "nonce too low": the node has it, or its nonce is spent (mined: the receipt
    // poll sees it; replaced: only the deadline ends the wait). Anything else: try again next poll.
    return /already known|known transaction|nonce too low/i.test(String((error as Error).message));
  }
}

/**
 * Hands a signed transaction to the node. 'SENT': the node took it. 'ANSWER_LOST': the request
 * failed without the node's answer (a dropped connection, a timeout), so the node may hold it: the
 * receipt wait decides, handing it again meanwhile. 'NONCE_REFUSED' only when the node refused its
 * nonce and does not know its hash, which proves it was never accepted (nonce re-read for the next
 * try). Any other refusal by the node counts as 'SENT' (the receipt wait decides).
 */
async function sendOnce(
  wallet: ChainWalletClient,
  publicClient: ChainPublicClient,
  signed: { serialized: Hex; txHash: Hex },
  state: RelayerState,
): Promise<'SENT' | 'ANSWER_LOST' | 'NONCE_REFUSED'> {
  try {
    await wallet.sendRawTransaction({ serializedTransaction: signed.serialized });
    state.advanceNonce();
    return 'SENT';
  } catch (error) {
    if (answerLost(error)) {
      // The nonce stays counted: the transaction may still land, and it is handed again until
      // the node holds it; the next group goes behind it.
      return 'ANSWER_LOST';
    }
    state.forgetNonce();
    if (!NONCE_REFUSAL.test(String((error as Error).message))) return 'SENT';
    const known = await publicClient
      .getTransaction({ hash: signed.txHash })
      .then(() => true)
      .catch((lookup: Error) => (lookup.name === 'TransactionNotFoundError' ? false : true));
    return known ? 'SENT' : 'NONCE_REFUSED';
  }
}

/** The request failed in transport (no JSON-RPC answer from the node): viem's HTTP or timeout error. */
function answerLost(error: unknown): boolean {
  const name = (error as { name?: string } | null)?.name;
  if (name === 'HttpRequestError' || name === 'TimeoutError') return true;
  const cause = (error as { cause?: unknown } | null)?.cause;
  return cause !== undefined && cause !== error && answerLost(cause);
}

/** The relayer's next account nonce and a short-lived fee quote, kept in memory. */
class RelayerState {
  private quote: {
    at: number;
    fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };
  } | null = null;

  constructor(
    private readonly publicClient: ChainPublicClient,
    private readonly address: Address,
    private readonly chainId: number,
  ) {}

  /**
   * The next nonce from the process's relayer nonces, which every sender of this key in the process
   * shares (the single path, the consumer worker's refunds), so none collide; no round trip after
   * the first.
   */
  nonce(): Promise<number> {
    const key = { address: this.address, chainId: this.chainId };
    return relayerNonces.consume({ ...key, client: this.publicClient });
  }

  advanceNonce(): void {
    // consume() already counted it.
  }

  /** After any outcome the relayer could not see, the chain's count is the truth again. */
  forgetNonce(): void {
    relayerNonces.reset({ address: this.address, chainId: this.chainId });
    this.quote = null;
  }

  async fees(): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> {
    if (this.quote && Date.now() - this.quote.at < FEE_QUOTE_TTL_MS) return this.quote.fees;
    const quoted = await this.publicClient.estimateFeesPerGas();
    const fees = {
      maxFeePerGas: quoted.maxFeePerGas * 2n,
      maxPriorityFeePerGas: quoted.maxPriorityFeePerGas,
    };
    this.quote = { at: Date.now(), fees };
    return fees;
  }
}
