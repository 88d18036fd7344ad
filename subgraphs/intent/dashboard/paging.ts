// Paging shared by the dashboard lists (decisions, intents): the page size (1–200) and opaque
// keyset cursors. A cursor is only ever one this list handed out; anything else is REQUEST_INVALID.
// The page's GraphQL classes are in schema.ts.
import { AppError } from '../../../core/errors';

export function pageSize(first: number): number {
  if (!Number.isInteger(first) || first < 1 || first > 200) {
    throw new AppError('REQUEST_INVALID', 'first must be 1–200.', [
      { field: 'first', reason: 'must be 1–200' },
    ]);
  }
  return first;
}

export function cursorOf(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}

export function decodeCursor(
  cursor: string | null | undefined,
  shape: RegExp,
): RegExpExecArray | null {
  if (cursor === null || cursor === undefined) return null;
  const match = shape.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (match === null)
    throw new AppError('REQUEST_INVALID', 'The cursor is not one this list handed out.', [
      { field: 'after', reason: 'unknown cursor' },
    ]);
  return match;
}
