// The settlement leg of a consumer intent (the `settlement` jsonb): what the pay, settle and resolve
// steps (workflow.ts) record about the merchant's payment, one field at a time. One owner for the
// merge: settlementWith adds a step's fields to what the row holds and checks the result against
// the zod schema before it is written, so no step can drop or mistype another's field. Fields not
// listed pass through unchanged (rows written before this schema).
import { z } from 'zod';

const decimal = z.string().regex(/^[0-9]{1,78}$/);
const hash = z.string().regex(/^0x[0-9a-fA-F]{64}$/);
const instant = z.string().min(1);

export const SettlementLegSchema = z.looseObject({
  /** pay: the capability the authorization was signed under, and the signed authorization. */
  capabilityId: z.string().optional(),
  authorization: z.looseObject({ nonce: z.string(), validBefore: decimal }).optional(),
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

export type SettlementLeg = z.infer<typeof SettlementLegSchema>;

/** The row's settlement leg with `fields` added; throws when the result breaks the schema. */
export function settlementWith(
  row: { readonly settlement: Record<string, unknown> | null },
  fields: Partial<SettlementLeg>,
): SettlementLeg {
  return SettlementLegSchema.parse({ ...(row.settlement ?? {}), ...fields });
}
