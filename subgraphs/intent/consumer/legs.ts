// The JSON legs of a consumer intent (the `quote`, `funding`, `settlement`, `provider_attested` and
// `service_verified` jsonb columns), each as a zod schema: parsed once, when store.ts reads a row
// (legsOf), so the rest of the code reads typed fields instead of casting. A stored leg that breaks
// its schema fails loudly (500 CONSUMER_INTENT_LEG_INVALID naming the intent and the leg), never
// silently. Fields are optional because a leg fills in as the intent moves (create writes the quote,
// each step adds to the settlement), and fields not listed pass through unchanged (rows written
// before a field was named). The parsed leg is the object the database gave once it validates (zod's
// output would reorder its keys), so the JSON clients see (GraphQL fields, receipts) is unchanged.
// One owner for the settlement merge: settlementWith adds a step's fields to what the row holds and
// checks the result against the schema before it is written, so no step can drop or mistype
// another's field.
import { z } from 'zod';
import { AppError } from '../../../core/errors';

const decimal = z.string().regex(/^[0-9]{1,78}$/);
const hash = z.string().regex(/^0x[0-9a-fA-F]{64}$/);
const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/);
const instant = z.string().min(1);
const bps = z.number().int().nonnegative();

/** The quote create stores (create/quoteIntent.ts buildQuote): cost, fee, spread, funding, merchant. */
export const QuoteLegSchema = z.looseObject({
  quoteId: z.string().optional(),
  quotedAt: instant.optional(),
  expiresAt: instant.optional(),
  capability: z.string().optional(),
  provider: z.string().optional(),
  /** What the merchant asks, in the settlement asset. */
  providerCost: z
    .looseObject({ network: z.string(), asset: z.string(), amount: decimal })
    .optional(),
  feeBps: bps.optional(),
  fee: decimal.optional(),
  spreadBps: bps.optional(),
  spread: decimal.optional(),
  /** What the consumer pays, in the funding asset, and where. */
  funding: z
    .looseObject({
      network: z.string(),
      asset: z.string(),
      amount: decimal.optional(),
      payTo: z.string().optional(),
    })
    .optional(),
  /** The merchant's terms: its paid URL, method and payTo, its requirements verbatim. */
  merchant: z
    .looseObject({
      url: z.string().optional(),
      method: z.string().optional(),
      payTo: address.optional(),
      maxTimeoutSeconds: z.number().optional(),
    })
    .optional(),
});

/** The consumer's payment as funding/booking.ts records it. */
export const FundingLegSchema = z.looseObject({
  /** The x402 payment's id; null for a payment seen on the chain alone. */
  paymentId: z.string().nullable().optional(),
  payer: z.string().optional(),
  payTo: z.string().optional(),
  network: z.string().optional(),
  asset: z.string().optional(),
  amount: decimal.optional(),
  txHash: z.string().optional(),
  groupId: z.string().optional(),
  fundedAt: instant.optional(),
});

export const SettlementLegSchema = z.looseObject({
  /** pay: the capability the authorization was signed under, and the signed authorization. */
  capabilityId: z.string().optional(),
  authorization: z
    .looseObject({ nonce: z.string().optional(), validBefore: decimal.optional() })
    .optional(),
  signedAt: instant.optional(),
  /** The settlement chain's block when the authorization was signed (where a log search starts). */
  fromBlock: decimal.optional(),
  requestLeftAt: instant.optional(),
  /** settle / resolve PAID: the confirmed transfer and its SERVICE_PAYMENT group. */
  txHash: hash.optional(),
  blockNumber: decimal.optional(),
  groupId: z.string().optional(),
  paidAt: instant.optional(),
  recognitionGroupIds: z.array(z.string()).optional(),
  /** pay, when ambiguous: the SUSPENSE park group. */
  suspenseGroupId: z.string().optional(),
});

/** The merchant's word about its delivery (execution/providerPaid.ts). */
export const ProviderAttestedLegSchema = z.looseObject({
  status: z.string().optional(),
  attestedAt: instant.optional(),
  fields: z.record(z.string(), z.unknown()).optional(),
});

/** The service's own delivery finding (delivery/verification.ts ServiceVerified). */
export const ServiceVerifiedLegSchema = z.looseObject({
  verified: z.boolean().optional(),
  method: z.string().optional(),
  source: z.string().optional(),
  checkedAt: instant.optional(),
  detail: z.string().optional(),
});

export type QuoteLeg = z.infer<typeof QuoteLegSchema>;
export type FundingLeg = z.infer<typeof FundingLegSchema>;
export type SettlementLeg = z.infer<typeof SettlementLegSchema>;
export type ProviderAttestedLeg = z.infer<typeof ProviderAttestedLegSchema>;
export type ServiceVerifiedLeg = z.infer<typeof ServiceVerifiedLegSchema>;

/** The typed legs of one row. */
export interface ConsumerIntentLegs {
  readonly quote: QuoteLeg | null;
  readonly funding: FundingLeg | null;
  readonly settlement: SettlementLeg | null;
  readonly providerAttested: ProviderAttestedLeg | null;
  readonly serviceVerified: ServiceVerifiedLeg | null;
}

const LEG_SCHEMAS: { readonly [K in keyof ConsumerIntentLegs]: z.ZodType } = {
  quote: QuoteLegSchema,
  funding: FundingLegSchema,
  settlement: SettlementLegSchema,
  providerAttested: ProviderAttestedLegSchema,
  serviceVerified: ServiceVerifiedLegSchema,
};

/** The stored leg, checked against its schema; 500 CONSUMER_INTENT_LEG_INVALID when it breaks it. */
export function storedLeg<K extends keyof ConsumerIntentLegs>(
  intentId: string,
  leg: K,
  stored: unknown,
): ConsumerIntentLegs[K] {
  if (stored === null || stored === undefined) return null;
  const checked = LEG_SCHEMAS[leg].safeParse(stored);
  if (!checked.success) {
    const fields = checked.error.issues.map((issue) => issue.path.join('.') || '(root)');
    throw new AppError('CONSUMER_INTENT_LEG_INVALID', undefined, { intentId, leg, fields });
  }
  // The stored object itself (its key order kept), now known to fit the schema.
  return stored as ConsumerIntentLegs[K];
}

/** Every typed leg of a row read from the database. */
export function legsOf(
  intentId: string,
  stored: { readonly [K in keyof ConsumerIntentLegs]: unknown },
): ConsumerIntentLegs {
  return {
    quote: storedLeg(intentId, 'quote', stored.quote),
    funding: storedLeg(intentId, 'funding', stored.funding),
    settlement: storedLeg(intentId, 'settlement', stored.settlement),
    providerAttested: storedLeg(intentId, 'providerAttested', stored.providerAttested),
    serviceVerified: storedLeg(intentId, 'serviceVerified', stored.serviceVerified),
  };
}

/** The row's settlement leg with `fields` added; throws when the result breaks the schema. */
export function settlementWith(
  row: { readonly settlement: Record<string, unknown> | null },
  fields: Partial<SettlementLeg>,
): SettlementLeg {
  return SettlementLegSchema.parse({ ...(row.settlement ?? {}), ...fields });
}
