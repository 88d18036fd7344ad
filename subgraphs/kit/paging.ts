// Paging shared by every subgraph's GraphQL lists: bounded page sizes and opaque keyset cursors.
// A cursor is the base64url of a list's own text (`seq:42`, `i:<micros>:<hash>` ...); a cursor that
// does not match the list's shape is one this list never handed out, and is REQUEST_INVALID.
import { AppError } from '../../core/errors';

export interface PageBounds {
  /** The largest page a caller may ask for. */
  readonly max: number;
  /** The page size when the caller names none. */
  readonly fallback: number;
  /** The error's message; the default REQUEST_INVALID text when absent. */
  readonly message?: string;
}

/** `first`, or the list's default, when it is an integer from 1 to `max`; else REQUEST_INVALID. */
export function pageSize(first: number | null | undefined, bounds: PageBounds): number {
  const size = first ?? bounds.fallback;
  if (!Number.isSafeInteger(size) || size < 1 || size > bounds.max) {
    throw new AppError('REQUEST_INVALID', bounds.message, [
      { field: 'first', reason: `must be 1 to ${bounds.max}` },
    ]);
  }
  return size;
}

export function encodeCursor(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}

/** The cursor's text matched against the list's shape (groups hold the keys); else REQUEST_INVALID. */
export function decodeCursor(cursor: string, shape: RegExp): RegExpExecArray {
  const match = shape.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (match === null)
    throw new AppError('REQUEST_INVALID', 'The cursor is not one this list handed out.', [
      { field: 'after', reason: 'unknown cursor' },
    ]);
  return match;
}
