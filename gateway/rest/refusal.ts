// A refusal a subgraph answers as data ({code, message, details} or null) rather than as an error,
// so the gateway can decide before any 402 (and still replay a payment already taken), turned back
// into the AppError the client receives: the registry's code (or the route's fallback when the
// subgraph named none the registry knows), its message or the code's default, its details.
import { AppError, type ErrorCode, isErrorCode } from '../../core/errors';

export function refusalFromData(raw: unknown, fallback: ErrorCode): AppError | null {
  if (raw === null || raw === undefined) return null;
  const refusal = raw as { code?: unknown; message?: unknown; details?: unknown };
  const code = isErrorCode(refusal.code) ? refusal.code : fallback;
  const message = typeof refusal.message === 'string' ? refusal.message : undefined;
  return new AppError(code, message, refusal.details ?? undefined);
}
