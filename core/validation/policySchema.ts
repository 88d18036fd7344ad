// The spend policy document (DECISIONS "Spend policy (wire)") as zod schemas: every bound, default
// and reason of the field details, lists read as sorted sets, amounts parsed exactly (bigint) in the
// asset's decimals. Cross-field rules run last, as superRefine; policy.ts turns the result into rules.
import type { Address } from 'viem';
import { z } from 'zod';
import { AmountFormatError, MAX_ASSET_DECIMALS, parseDisplayAmount } from '../money/amount';
import { ADDRESS_PATTERN, AGENT_ID_PATTERN, CATEGORY_PATTERN, NETWORK_PATTERN } from './fields';
import {
  BUDGET_WINDOWS,
  DUPLICATE_KEYS,
  ESCALATION_CHANNELS,
  POLICY_BOUNDS,
  POLICY_DEFAULTS,
} from './policyRules';
import { formatIsoSeconds, parseIsoTimestamp } from './timestamp';
import { plainObject, present, requiredOr } from './zodDetails';

// Symbols are shown to people ("USD₮0"), so any visible characters, but no spaces or controls.
const SYMBOL_PATTERN = /^[^\s\p{C}]{1,16}$/u;
const NAME_FORBIDDEN = /\p{C}/u;
const ADDRESS_REASON = 'must be 0x followed by 40 hex characters';
const NAME_REASON = `must be a string of at most ${POLICY_BOUNDS.nameMaxChars} characters without control characters`;

const address = z
  .string(requiredOr(ADDRESS_REASON))
  .regex(ADDRESS_PATTERN, ADDRESS_REASON)
  .transform((value) => value.toLowerCase() as Address);

function integer(bounds: { readonly min: number; readonly max: number }) {
  const reason = `must be an integer ${bounds.min}–${bounds.max}`;
  return z
    .number({ error: reason })
    .refine((value) => Number.isSafeInteger(value) && value >= bounds.min && value <= bounds.max, {
      error: reason,
    });
}

function oneOf<const T extends readonly [string, ...string[]]>(options: T) {
  return z.enum(options, { error: `must be one of ${options.join(', ')}` });
}

/** A cross-field rule that runs even where other fields are wrong: every problem shows at once. */
const ALWAYS = { when: () => true } as const;

/** An object of known fields only; anything else (an array, null, a number) is not a section. */
function section<T extends z.core.$ZodLooseShape>(shape: T) {
  return plainObject(requiredOr('must be an object').error).pipe(z.strictObject(shape));
}

/** A section whose `rule` runs after its fields, even where they are wrong. */
function ruledSection<T extends z.core.$ZodLooseShape>(
  shape: T,
  rule: (value: Record<string, unknown>, ctx: z.RefinementCtx) => void,
) {
  return plainObject(requiredOr('must be an object').error).pipe(
    z.strictObject(shape).superRefine(rule, ALWAYS),
  );
}

/** Sets, not sequences: each item checked, then deduplicated and sorted. */
function list<T extends string>(item: z.ZodType<T>, maxItems: number) {
  return (
    z
      .array(z.unknown(), { error: 'must be an array' })
      // A refine, not .max(): zod stops an oversized array with an aborting issue, and that would
      // keep the policy's cross-field rules from running; past the bound, no item is read either way.
      .refine((items) => items.length <= maxItems, `must have at most ${maxItems} items`)
      .pipe(z.array(item))
      .transform((items) => [...new Set(items)].sort())
  );
}

const category = z
  .string({ error: 'must be 1–64 characters of a–z 0–9 . -' })
  .transform((value) => value.toLowerCase())
  .pipe(z.string().regex(CATEGORY_PATTERN, 'must be 1–64 characters of a–z 0–9 . -'));

// Agent ids are case-sensitive: "Bot" and "bot" may be different agents.
const agentId = z
  .string({ error: 'must be 1–128 characters of A–Z a–z 0–9 . _ : -' })
  .regex(AGENT_ID_PATTERN, 'must be 1–128 characters of A–Z a–z 0–9 . _ : -');

export const assetSchema = section({
  network: z
    .string({ error: 'must be a CAIP-2 network like eip155:196' })
    .regex(NETWORK_PATTERN, 'must be a CAIP-2 network like eip155:196'),
  token: address,
  symbol: z
    .string({ error: `must be 1–${POLICY_BOUNDS.symbolMaxChars} visible characters` })
    .regex(SYMBOL_PATTERN, `must be 1–${POLICY_BOUNDS.symbolMaxChars} visible characters`),
  decimals: integer({ min: 0, max: MAX_ASSET_DECIMALS }),
});

const categoriesList = list(category, POLICY_BOUNDS.categoriesMaxItems);
// `allow` is looked at before anything else in the section: without it, deny is not read.
const categories = section({ allow: present(), deny: z.unknown().optional() }).pipe(
  z
    .object({ allow: categoriesList, deny: categoriesList.default(() => []) })
    .superRefine((value, ctx) => {
      if (Array.isArray(value.allow) && value.allow.length === 0)
        ctx.addIssue({
          code: 'custom',
          path: ['allow'],
          message: 'must list at least one category',
        });
    }, ALWAYS),
);

function allowDeny<T extends string>(item: z.ZodType<T>, maxItems: number) {
  const items = list(item, maxItems).default(() => []);
  return section({ allow: items, deny: items }).prefault({});
}

function nonEmpty(key: string, message: string) {
  return (value: Record<string, unknown>, ctx: z.RefinementCtx) => {
    const listed = value[key];
    if (Array.isArray(listed) && listed.length === 0)
      ctx.addIssue({ code: 'custom', path: [key], message });
  };
}

const vendorRisk = section({
  minScore: integer(POLICY_BOUNDS.minScore).default(POLICY_DEFAULTS.vendorRisk.minScore),
  onBelow: oneOf(['BLOCK', 'ESCALATE']).default(POLICY_DEFAULTS.vendorRisk.onBelow),
  onUnavailable: oneOf(['ALLOW', 'BLOCK', 'ESCALATE']).default(
    POLICY_DEFAULTS.vendorRisk.onUnavailable,
  ),
}).prefault({});

// An empty key tuple would make every recent approval a "duplicate" of every intent.
const duplicates = ruledSection(
  {
    windowMinutes: integer(POLICY_BOUNDS.duplicateWindowMinutes).default(
      POLICY_DEFAULTS.duplicates.windowMinutes,
    ),
    keys: list(oneOf(DUPLICATE_KEYS), POLICY_BOUNDS.duplicateKeysMaxItems).default(() => [
      ...POLICY_DEFAULTS.duplicates.keys,
    ]),
  },
  nonEmpty('keys', 'must list at least one key (set windowMinutes to 0 to disable)'),
).prefault({});

const cooldowns = section({
  sameServiceMinutes: integer(POLICY_BOUNDS.sameServiceMinutes).default(
    POLICY_DEFAULTS.cooldowns.sameServiceMinutes,
  ),
}).prefault({});

const rateLimit = section({
  callsPerHour: integer(POLICY_BOUNDS.callsPerHour).default(POLICY_DEFAULTS.rateLimit.callsPerHour),
}).prefault({});

// With no channel an escalation could reach nobody and would only ever time out.
const escalation = ruledSection(
  {
    timeoutMinutes: integer(POLICY_BOUNDS.escalationTimeoutMinutes).default(
      POLICY_DEFAULTS.escalation.timeoutMinutes,
    ),
    channels: list(oneOf(ESCALATION_CHANNELS), POLICY_BOUNDS.escalationChannelsMaxItems).default(
      () => [...POLICY_DEFAULTS.escalation.channels],
    ),
  },
  nonEmpty('channels', 'must list at least one channel'),
).prefault({});

/** ISO-8601 in, one spelling out; null (or absent) means the policy never expires. */
const expiresAt = z
  .unknown()
  .transform((value, ctx): string | null => {
    if (value === null) return POLICY_DEFAULTS.expiresAt;
    const parsed = parseIsoTimestamp(value);
    if (parsed.ok) return formatIsoSeconds(parsed.unixSeconds);
    ctx.addIssue({ code: 'custom', message: parsed.reason });
    return z.NEVER;
  })
  .default(POLICY_DEFAULTS.expiresAt);

/** A display amount ("25.00") in atomic units of an asset with `decimals` decimals. */
function amount(decimals: number) {
  return z
    .string(requiredOr('must be a decimal string like "25.00", not a number'))
    .transform((value, ctx) => {
      try {
        return parseDisplayAmount(value, decimals);
      } catch (error) {
        if (!(error instanceof AmountFormatError)) throw error;
        const message =
          error.reason === 'TOO_MANY_DECIMALS'
            ? `has more fractional digits than the asset's ${decimals} decimals`
            : error.message;
        ctx.addIssue({ code: 'custom', message });
        return z.NEVER;
      }
    });
}

export const policyFields = {
  owner: address,
  name: z
    .string({ error: NAME_REASON })
    .refine(
      (value) => value.length <= POLICY_BOUNDS.nameMaxChars && !NAME_FORBIDDEN.test(value),
      NAME_REASON,
    )
    .default(POLICY_DEFAULTS.name),
  asset: assetSchema,
  categories,
  recipients: allowDeny(address, POLICY_BOUNDS.recipientsMaxItems),
  agents: allowDeny(agentId, POLICY_BOUNDS.agentsMaxItems),
  vendorRisk,
  duplicates,
  cooldowns,
  rateLimit,
  escalation,
  onPerCallCapExceeded: oneOf(['BLOCK', 'ESCALATE']).default(POLICY_DEFAULTS.onPerCallCapExceeded),
  budgetWindow: oneOf(BUDGET_WINDOWS).default(POLICY_DEFAULTS.budgetWindow),
  maxDeadlineMinutes: integer(POLICY_BOUNDS.maxDeadlineMinutes).default(
    POLICY_DEFAULTS.maxDeadlineMinutes,
  ),
  expiresAt,
  amount,
};
