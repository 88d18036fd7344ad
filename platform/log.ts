// Structured logging (pino) for every process. Anything that could carry a secret is redacted by
// path before it is written, so a careless log call cannot leak a key, token or signature.
import pino, { type Logger } from 'pino';

export type { Logger } from 'pino';

export const REDACTED_PATHS = [
  'privateKey',
  '*.privateKey',
  'token',
  '*.token',
  'authorization',
  '*.authorization',
  'req.headers.authorization',
  'req.headers["payment-signature"]',
  'req.headers["x-payment"]',
  'req.headers["x-spend-control-actor"]',
  'req.headers.cookie',
  'secret',
  '*.secret',
  'signature',
  '*.signature',
];

export function createLogger(
  options: { level?: string; name?: string; destination?: pino.DestinationStream } = {},
): Logger {
  return pino(
    {
      name: options.name ?? 'spend-control',
      level: options.level ?? 'info',
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination,
  );
}

/** A logger that writes nothing: the default for library code and tests that do not assert on logs. */
export const silentLogger: Logger = pino({ level: 'silent' });
