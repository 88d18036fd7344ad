// Amount checks shared by the posting calls: atomic units travel as bigints and reach SQL as
// decimal strings. A wrong type or sign is refused here with LEDGER_GROUP_INVALID, before any
// statement runs; the database checks the same again.
import { AppError } from '../../../core/errors';

/** Any bigint, as the decimal string SQL takes. */
export function atomic(name: string, value: bigint): string {
  if (typeof value !== 'bigint')
    throw new AppError('LEDGER_GROUP_INVALID', `${name} must be a bigint of atomic units`);
  return value.toString();
}

export function positive(name: string, value: bigint): bigint {
  if (typeof value !== 'bigint' || value <= 0n) {
    throw new AppError('LEDGER_GROUP_INVALID', `${name} must be a positive bigint of atomic units`);
  }
  return value;
}

export function nonNegative(name: string, value: bigint): bigint {
  if (typeof value !== 'bigint' || value < 0n) {
    throw new AppError(
      'LEDGER_GROUP_INVALID',
      `${name} must be a non-negative bigint of atomic units`,
    );
  }
  return value;
}
