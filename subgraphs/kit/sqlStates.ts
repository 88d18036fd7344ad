// Custom SQLSTATEs raised by a subgraph's SQL, mapped to the AppError codes clients see. Each
// subgraph declares its map in its own `sql.ts`; test/architecture/sqlStates.test.ts greps the
// migrations for ERRCODE and fails on a code no map names.
import { AppError, type ErrorCode } from '../../core/errors';

/**
 * SQLSTATE (five characters, e.g. `LG001`) → the error code clients see, or `DEFECT` for a guard
 * that only our own broken code can trip (e.g. an UPDATE of an append-only table): such an error
 * is not a refusal to explain to a client, so it passes through and reaches them as
 * INTERNAL_ERROR with nothing of the SQL message. Naming it keeps the map complete.
 */
export type SqlStateMap = Readonly<Record<string, ErrorCode | typeof DEFECT>>;

export const DEFECT = 'DEFECT';

/** The AppError for an error PostgreSQL raised with a SQLSTATE in `map`, or null for any other. */
export function appErrorFromSql(error: unknown, map: SqlStateMap): AppError | null {
  if (typeof error !== 'object' || error === null) return null;
  const { code: sqlstate, message } = error as { code?: unknown; message?: unknown };
  if (typeof sqlstate !== 'string' || typeof message !== 'string') return null;
  const code = map[sqlstate];
  if (code === undefined || code === DEFECT) return null;
  return new AppError(code, message.replace(/^[A-Z_]+: /, ''), { sqlstate }, { cause: error });
}
