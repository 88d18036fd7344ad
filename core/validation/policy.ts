// validatePolicy: a spend policy as people write it (DECISIONS "Spend policy (wire)") checked and
// normalised: defaults filled in, case-insensitive lists lowercased, deduplicated and sorted,
// amounts in one spelling. Two spellings of one policy give identical rules, hence one policyHash.
import { z } from 'zod';
import type { FieldError } from '../errors';
import { formatAmount, MAX_ASSET_DECIMALS } from '../money/amount';
import { isPlainObject } from './fields';
import type { NormalisedPolicyRules } from './policyRules';
import { assetSchema, policyFields } from './policySchema';
import { fieldDetails, plainObject } from './zodDetails';

export {
  BUDGET_WINDOWS,
  DUPLICATE_KEYS,
  ESCALATION_CHANNELS,
  POLICY_BOUNDS,
  POLICY_DEFAULTS,
  type BudgetWindow,
  type CapVerdict,
  type DuplicateKey,
  type EscalationChannel,
  type NormalisedPolicyRules,
  type UnavailableVerdict,
} from './policyRules';

export type PolicyValidation =
  { ok: true; rules: NormalisedPolicyRules } | { ok: false; errors: FieldError[] };

/** The parse result may hold the raw input where a field failed: only bigints are amounts. */
function atomic(value: unknown): bigint | undefined {
  return typeof value === 'bigint' ? value : undefined;
}

/** Absent hardCap: under BLOCK it is perCallCap (nothing larger could pass anyway); under
 * ESCALATE it is dailyBudget, so an escalation above perCallCap can still be approved. */
function hardCapOf(document: Record<string, unknown>): {
  hardCap: bigint | undefined;
  defaultedTo?: 'dailyBudget' | 'perCallCap';
} {
  const explicit = atomic(document.hardCap);
  if (explicit !== undefined) return { hardCap: explicit };
  const defaultedTo = document.onPerCallCapExceeded === 'ESCALATE' ? 'dailyBudget' : 'perCallCap';
  return { hardCap: atomic(document[defaultedTo]), defaultedTo };
}

/** The rules that tie amounts together, checked after (and besides) every single field. */
function amountsAgree(document: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const dailyBudget = atomic(document.dailyBudget);
  const perCallCap = atomic(document.perCallCap);
  const escalateAbove = atomic(document.escalateAbove);
  if (dailyBudget !== undefined && perCallCap !== undefined && perCallCap > dailyBudget)
    ctx.addIssue({ code: 'custom', path: ['perCallCap'], message: 'must not exceed dailyBudget' });
  const { hardCap, defaultedTo } = hardCapOf(document);
  if (escalateAbove !== undefined && hardCap !== undefined && escalateAbove > hardCap) {
    const why = defaultedTo === undefined ? '' : ` (hardCap defaults to ${defaultedTo})`;
    ctx.addIssue({
      code: 'custom',
      path: ['escalateAbove'],
      message: `must not exceed hardCap${why}`,
    });
  }
}

function policySchema(decimals: number) {
  const { amount, ...fields } = policyFields;
  // Keys in the order their problems are listed.
  return plainObject('must be a JSON object').pipe(
    z
      .strictObject({
        owner: fields.owner,
        name: fields.name,
        asset: fields.asset,
        dailyBudget: amount(decimals),
        perCallCap: amount(decimals),
        escalateAbove: amount(decimals),
        hardCap: amount(decimals).nullish(),
        onPerCallCapExceeded: fields.onPerCallCapExceeded,
        categories: fields.categories,
        recipients: fields.recipients,
        agents: fields.agents,
        vendorRisk: fields.vendorRisk,
        duplicates: fields.duplicates,
        cooldowns: fields.cooldowns,
        rateLimit: fields.rateLimit,
        escalation: fields.escalation,
        budgetWindow: fields.budgetWindow,
        maxDeadlineMinutes: fields.maxDeadlineMinutes,
        expiresAt: fields.expiresAt,
      })
      .superRefine(amountsAgree, { when: () => true }),
  );
}

type PolicySchema = ReturnType<typeof policySchema>;
type ParsedPolicy = z.output<PolicySchema>;

// Amounts are read in the asset's decimals, so there is one schema per decimals (at most 37).
const schemasByDecimals = new Map<number, PolicySchema>();

function schemaFor(decimals: number): PolicySchema {
  let schema = schemasByDecimals.get(decimals);
  if (schema === undefined) {
    schema = policySchema(decimals);
    schemasByDecimals.set(decimals, schema);
  }
  return schema;
}

/** With an unusable asset, amounts are still checked for shape so all mistakes show at once. */
function decimalsOf(raw: unknown): number {
  if (!isPlainObject(raw)) return MAX_ASSET_DECIMALS;
  const asset = assetSchema.safeParse(raw.asset);
  return asset.success ? asset.data.decimals : MAX_ASSET_DECIMALS;
}

/** Checks a policy document and returns its normalised rules, or every field error found. */
export function validatePolicy(raw: unknown): PolicyValidation {
  const parsed = schemaFor(decimalsOf(raw)).safeParse(raw);
  if (!parsed.success) return { ok: false, errors: fieldDetails(parsed.error.issues) };
  return { ok: true, rules: normalised(parsed.data) };
}

function normalised(policy: ParsedPolicy): NormalisedPolicyRules {
  const money = (atomicAmount: bigint): string => formatAmount(atomicAmount, policy.asset.decimals);
  const { hardCap } = hardCapOf(policy);
  return {
    owner: policy.owner,
    name: policy.name,
    asset: policy.asset,
    dailyBudget: money(policy.dailyBudget),
    perCallCap: money(policy.perCallCap),
    onPerCallCapExceeded: policy.onPerCallCapExceeded,
    hardCap: money(hardCap!),
    escalateAbove: money(policy.escalateAbove),
    categories: policy.categories,
    recipients: policy.recipients,
    agents: policy.agents,
    vendorRisk: policy.vendorRisk,
    duplicates: policy.duplicates,
    cooldowns: policy.cooldowns,
    rateLimit: policy.rateLimit,
    escalation: policy.escalation,
    ...(policy.budgetWindow === 'ROLLING_24H' ? { budgetWindow: policy.budgetWindow } : {}),
    maxDeadlineMinutes: policy.maxDeadlineMinutes,
    expiresAt: policy.expiresAt,
  };
}
