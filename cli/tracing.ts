// Tracing for this process, started when cli/main.ts is loaded and before it requires anything that
// opens sockets (http, pg), so that their instrumentations apply; nothing is loaded when
// OTEL_EXPORTER_OTLP_ENDPOINT is unset (docs/operations.md, "Tracing"). The service name says the
// role: spend-control-<role> (`all` when no --role is given).
import { startTracingFromEnv, type Tracing } from '../platform/tracing';

function roleOf(argv: readonly string[]): string {
  const index = argv.findIndex((arg) => arg === '--role' || arg.startsWith('--role='));
  if (index < 0) return 'all';
  const arg = argv[index]!;
  return (arg.includes('=') ? arg.slice('--role='.length) : argv[index + 1]) ?? 'all';
}

export const tracing: Tracing | null = startTracingFromEnv(
  process.env,
  `spend-control-${roleOf(process.argv.slice(2))}`,
);
