// The page size of the dashboard lists (decisions, intents, pending anchors): 1–200; the cursors
// are the kit's.
import { decodeCursor, pageSize as kitPageSize } from '../../kit';

export { encodeCursor as cursorOf } from '../../kit';

export function pageSize(first: number): number {
  return kitPageSize(first, { max: 200, fallback: 50, message: 'first must be 1–200.' });
}

/** The cursor's keys; null on the first page. */
export function afterCursor(
  cursor: string | null | undefined,
  shape: RegExp,
): RegExpExecArray | null {
  return cursor === null || cursor === undefined ? null : decodeCursor(cursor, shape);
}
