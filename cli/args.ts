// Command-line arguments through node's util.parseArgs (strict: unknown options and stray
// arguments are refused), with refusals worded as the CLI has always worded them: "unknown option
// --x", "--role needs a value". A UsageError prints its message and the usage text, then exits 1.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ROLES, type Role, type StartArgs } from './startup';

export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;

/** The option or argument a parseArgs refusal names: `'--role <value>'` → `--role`. */
function named(message: string): string | null {
  return /'([^' <]+)/.exec(message)?.[1] ?? null;
}

/**
 * Our wording of a parseArgs refusal; anything unforeseen keeps node's own message. Read by shape,
 * not instanceof: node's errors may come from another realm (jest's sandbox, for one).
 */
function usageErrorOf(error: unknown): UsageError {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof message !== 'string') return new UsageError(String(error));
  const name = named(message);
  if (name !== null && code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE')
    return new UsageError(`${name} needs a value`);
  if (
    name !== null &&
    (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL')
  )
    return new UsageError(`unknown option ${name}`);
  return new UsageError(message);
}

/** Strict parseArgs; a refusal is a UsageError. */
export function parseCommandArgs<T extends Options>(
  argv: readonly string[],
  options: T,
  allowPositionals = false,
) {
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals });
  } catch (error) {
    throw usageErrorOf(error);
  }
}

const START_OPTIONS = {
  role: { type: 'string', default: 'all' },
  transport: { type: 'string', default: 'in-process' },
} as const satisfies Options;

/** `start [--role <role>] [--transport in-process|http]`. */
export function parseStartArgs(argv: readonly string[]): StartArgs {
  const { role, transport } = parseCommandArgs(argv, START_OPTIONS).values;
  if (!(ROLES as readonly string[]).includes(role))
    throw new UsageError(`--role must be one of ${ROLES.join(', ')}`);
  if (transport !== 'in-process' && transport !== 'http')
    throw new UsageError('--transport must be in-process or http');
  return { role: role as Role, transport };
}
