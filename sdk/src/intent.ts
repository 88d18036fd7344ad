// A SpendIntent built and validated on the agent's side with the service's own rules: the same
// core/ validator the gateway and the intent subgraph run (compiled into this package, never
// copied), so an intent the SDK accepts is one the service accepts, and its intentHash is the
// service's to the bit. A refused intent throws INTENT_MALFORMED with the service's field details.
import type { Address, Hex } from 'viem';
import { spendIntentMessage, spendIntentTypedData } from '../../core/canon/intent-hash';
import type { JsonValue } from '../../core/canon/jcs';
import {
  spendIntentToWire,
  validateSpendIntent,
  type SpendIntent,
  type SpendIntentWire,
} from '../../core/validation/intent';
import { formatIsoSeconds } from '../../core/validation/timestamp';
import { SpendControlError } from './errors';

export type { SpendIntentWire } from '../../core/validation/intent';

/** What an agent knows about the payment it is about to make; amounts in atomic units. */
export interface SpendIntentInput {
  readonly policyId: string;
  readonly policyHash: string;
  readonly agentId: string;
  readonly category: string;
  readonly provider: string;
  readonly capability: string;
  readonly item: { readonly [key: string]: JsonValue };
  readonly recipient: string;
  readonly network: string;
  readonly token: string;
  readonly amountAtomic: bigint | string;
  /** A Date, or an ISO-8601 timestamp with seconds precision. */
  readonly deadline: Date | string;
  /** Default: 64 random bits, so two intents built alike are still two intents. */
  readonly nonce?: bigint | string;
  readonly endpoint: string;
}

export interface BuiltSpendIntent {
  /** The wire form the REST routes take (canonical endpoint, lowercase addresses). */
  readonly wire: SpendIntentWire;
  /** The validated intent in domain units. */
  readonly intent: SpendIntent;
  /** EIP-712 hash of the intent: what the service returns, what owners sign. */
  readonly intentHash: Hex;
  /** The typed data a wallet's signTypedData takes to sign this intent. */
  readonly typedData: ReturnType<typeof spendIntentTypedData>;
}

function randomNonce(): bigint {
  const words = crypto.getRandomValues(new Uint32Array(2));
  return (BigInt(words[0]!) << 32n) | BigInt(words[1]!);
}

function deadlineText(deadline: Date | string): string {
  return deadline instanceof Date
    ? formatIsoSeconds(Math.floor(deadline.getTime() / 1000))
    : deadline;
}

/** Validates `input` against the service's rules at `now` (default: this clock). */
export function buildSpendIntent(
  input: SpendIntentInput,
  options: { readonly now?: Date } = {},
): BuiltSpendIntent {
  const raw = {
    policyId: input.policyId,
    policyHash: input.policyHash,
    agentId: input.agentId,
    category: input.category,
    provider: input.provider,
    capability: input.capability,
    item: input.item,
    recipient: input.recipient,
    network: input.network,
    token: input.token,
    amount: String(input.amountAtomic),
    deadline: deadlineText(input.deadline),
    nonce: String(input.nonce ?? randomNonce()),
    endpoint: input.endpoint,
  };
  return validatedIntent(raw, options.now ?? new Date());
}

/** The same check for an intent already in wire form (as read back from the service). */
export function validatedIntent(raw: unknown, now: Date): BuiltSpendIntent {
  const validation = validateSpendIntent(raw, now);
  if (!validation.ok) {
    throw new SpendControlError('INTENT_MALFORMED', 'The intent breaks the service rules.', {
      details: validation.errors,
    });
  }
  const { intent } = validation;
  return {
    wire: spendIntentToWire(intent),
    intent,
    intentHash: intent.intentHash,
    typedData: spendIntentTypedData(
      spendIntentMessage({
        ...intent,
        recipient: intent.recipient as Address,
        token: intent.token as Address,
      }),
    ),
  };
}
