// What a `spend-control start` is made of, apart from the parts it starts: the roles, the
// arguments, the error whose message is the whole story, and the stack of stoppers that stops
// everything started so far, in reverse order, when start fails or the process is told to stop.
import type { Logger } from '../platform/log';
import { SUBGRAPH_NAMES } from '../platform/db/migrate';

export const ROLES = ['all', 'gateway', 'worker', ...SUBGRAPH_NAMES] as const;
export type Role = (typeof ROLES)[number];

export interface StartArgs {
  role: Role;
  transport: 'in-process' | 'http';
}

export type Out = (line: string) => void;

export class StartupError extends Error {
  /** What is missing or wrong, for operators and scripts (docs/operations.md); null: none named. */
  readonly code: string | null;

  /** With a code the message reads `<code>: <message>`. */
  constructor(message: string, code: string | null = null) {
    super(code === null ? message : `${code}: ${message}`);
    this.name = 'StartupError';
    this.code = code;
  }
}

/** What start has started, stopped last-first; a failing stop is logged and the rest still stop. */
export class Stoppers {
  private readonly stoppers: Array<{ name: string; stop: () => Promise<unknown> }> = [];

  constructor(private readonly log: Logger) {}

  push(name: string, stop: () => Promise<unknown>): void {
    this.stoppers.push({ name, stop });
  }

  async stopAll(): Promise<void> {
    for (const stopper of this.stoppers.reverse()) {
      try {
        await stopper.stop();
      } catch (error) {
        this.log.error({ err: error, component: stopper.name }, 'error while stopping');
      }
    }
    this.stoppers.length = 0;
  }
}

/** A URL for the start-up summary: its password hidden. */
export function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '[unparseable url]';
  }
}
