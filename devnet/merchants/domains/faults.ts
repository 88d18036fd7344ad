// The devnet domains merchant's fault switches, so a buyer's failure paths run against a real seller:
// refuse before any payment, drop the connection after settling (the ambiguous case), lie about
// availability, answer slowly. Each stays set until changed or reset; all are off by default.
import { isRecord } from '../../peers/json';

/** Upper bound of the slow-answer delay: long enough for any client timeout, short enough to end. */
export const MAX_FAULT_DELAY_MS = 600_000;

export interface MerchantFaults {
  /** Answer 503 before any 402: no challenge, so no payment can happen. */
  readonly refuseBeforePayment: boolean;
  /** Settle on chain, then destroy the socket without answering. */
  readonly dropAfterSettle: boolean;
  /** Answer the opposite availability. */
  readonly lieAboutAvailability: boolean;
  /** Hold a verified paid request this long before answering; settlement follows the delay. */
  readonly delayMs: number;
}

export const NO_FAULTS: MerchantFaults = Object.freeze({
  refuseBeforePayment: false,
  dropAfterSettle: false,
  lieAboutAvailability: false,
  delayMs: 0,
});

const BOOLEAN_FAULTS = ['refuseBeforePayment', 'dropAfterSettle', 'lieAboutAvailability'] as const;

export class FaultPatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FaultPatchError';
  }
}

/** Applies a partial update (`{dropAfterSettle: true}`), refusing unknown names and ill-typed values. */
export function applyFaultPatch(current: MerchantFaults, patch: unknown): MerchantFaults {
  if (!isRecord(patch)) throw new FaultPatchError('expected a JSON object of fault switches');
  const next: { -readonly [K in keyof MerchantFaults]: MerchantFaults[K] } = { ...current };
  for (const [name, value] of Object.entries(patch)) {
    if ((BOOLEAN_FAULTS as readonly string[]).includes(name)) {
      if (typeof value !== 'boolean') throw new FaultPatchError(`${name} must be true or false`);
      next[name as (typeof BOOLEAN_FAULTS)[number]] = value;
    } else if (name === 'delayMs') {
      if (
        !Number.isSafeInteger(value) ||
        (value as number) < 0 ||
        (value as number) > MAX_FAULT_DELAY_MS
      ) {
        throw new FaultPatchError(
          `delayMs must be a whole number of milliseconds, 0..${MAX_FAULT_DELAY_MS}`,
        );
      }
      next.delayMs = value as number;
    } else {
      throw new FaultPatchError(
        `unknown fault ${JSON.stringify(name)}; known: ${[...BOOLEAN_FAULTS, 'delayMs'].join(', ')}`,
      );
    }
  }
  return Object.freeze(next);
}
