// The devnet domains merchant's fault switches, so a buyer's failure paths run against a real seller:
// refuse before any payment, drop the connection after settling (the ambiguous case), lie about
// availability, answer garbage, answer slowly, ask another price than the one quoted. Each stays set until changed or reset; all are off by default.
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
  /** Settle, then answer 200 with a body that is not `{domain, available, checkedAt}`. */
  readonly invalidAnswer: boolean;
  /** Hold a verified paid request this long before answering; settlement follows the delay. */
  readonly delayMs: number;
  /**
   * Ask (and settle) this many atomic units instead of the list price, as a decimal string: a
   * price that changed between a buyer's quote and its payment (under- or over-charging). Null:
   * the list price.
   */
  readonly askAtomic: string | null;
}

export const NO_FAULTS: MerchantFaults = Object.freeze({
  refuseBeforePayment: false,
  dropAfterSettle: false,
  lieAboutAvailability: false,
  invalidAnswer: false,
  delayMs: 0,
  askAtomic: null,
});

const BOOLEAN_FAULTS = [
  'refuseBeforePayment',
  'dropAfterSettle',
  'lieAboutAvailability',
  'invalidAnswer',
] as const;

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
    } else if (name === 'askAtomic') {
      if (value !== null && (typeof value !== 'string' || !/^[1-9][0-9]{0,30}$/.test(value)))
        throw new FaultPatchError(
          'askAtomic must be null or a positive whole number of atomic units as a string',
        );
      next.askAtomic = value as string | null;
    } else {
      throw new FaultPatchError(
        `unknown fault ${JSON.stringify(name)}; known: ${[...BOOLEAN_FAULTS, 'delayMs', 'askAtomic'].join(', ')}`,
      );
    }
  }
  return Object.freeze(next);
}
