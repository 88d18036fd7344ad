// Reads one environment variable at a time through the schemas of envValues.ts and collects every
// problem as "NAME: message", so one ConfigError reports all of them together. A refused value
// reads as its fallback (or null), so the readers after it still run.
import type { z } from 'zod';
import * as values from './envValues';
import type { Hex } from './sections';

export type Env = NodeJS.ProcessEnv;

export const HTTP = ['http:', 'https:'];
export const RPC = ['http:', 'https:', 'ws:', 'wss:'];
export const POSTGRES = ['postgres:', 'postgresql:'];

export class EnvReader {
  readonly problems: string[] = [];

  constructor(private readonly env: Env) {}

  /** Unset and empty (or blank) are the same: `FOO=` in an env file means "use the default". */
  raw(name: string): string | undefined {
    const value = this.env[name];
    if (value === undefined || value.trim() === '') return undefined;
    return value.trim();
  }

  problem(name: string, message: string): void {
    this.problems.push(`${name}: ${message}`);
  }

  /** The variable parsed by `schema`, `fallback` when unset, and `fallback` after a problem. */
  parse<T, F>(name: string, schema: z.ZodType<T, string>, fallback: F): T | F {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    const result = schema.safeParse(value);
    if (result.success) return result.data;
    this.problem(name, result.error.issues[0]!.message);
    return fallback;
  }

  string(name: string, fallback: string, maxLength = 1000): string {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (value.length > maxLength) this.problem(name, `must be at most ${maxLength} characters`);
    return value;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    return this.parse(name, values.oneOf(allowed), fallback);
  }

  integer(name: string, fallback: number, min: number, max: number): number {
    return this.parse(name, values.wholeNumber(min, max), fallback);
  }

  boolean(name: string, fallback: boolean): boolean {
    return this.parse(name, values.flag, fallback);
  }

  url(name: string, protocols: readonly string[]): string | null {
    return this.parse(name, values.urlOf(protocols), null);
  }

  address(name: string): Hex | null {
    return this.parse(name, values.address, null);
  }

  privateKey(name: string): Hex | null {
    return this.parse(name, values.privateKey, null);
  }

  secret(name: string): Buffer | null {
    return this.parse(name, values.hexSecret, null);
  }

  list(name: string): string[] {
    const value = this.raw(name);
    if (value === undefined) return [];
    return value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
  }
}
