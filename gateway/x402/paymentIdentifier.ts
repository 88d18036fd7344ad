// The x402 `payment-identifier` extension (@x402/extensions): a client names a payment with an id
// (`extensions["payment-identifier"].info.id` of its PaymentPayload), scoped by its payer. The first
// payload presented under an id binds it (gateway.payment_identifiers); the same payload again is
// answered from its payment record before anything is verified, and never settles twice; another
// payload under that id is 409 PAYMENT_IDENTIFIER_CONFLICT. The binding is written before the
// payment is claimed, so two different payloads racing under one id cannot both be settled.
import { createHash } from 'node:crypto';
import { decodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload } from '@x402/core/types';
import {
  PAYMENT_IDENTIFIER,
  declarePaymentIdentifierExtension,
  extractPaymentIdentifier,
  isValidPaymentId,
} from '@x402/extensions/payment-identifier';
import type { Pool } from 'pg';
import { canonicalJson } from '../../core/canon/jcs';
import { AppError } from '../../core/errors';
import type { AuthorizationKey } from '../../subgraphs/ledger';

export { PAYMENT_IDENTIFIER };

/** What a 402 advertises: the extension is supported and optional. */
export function paymentIdentifierDeclaration() {
  return declarePaymentIdentifierExtension(false);
}

/** A payment presented under an id. */
export interface IdentifiedPayment {
  readonly identifier: string;
  /** sha256 hex of the canonical `accepted` and `payload`: what was signed and offered. */
  readonly payloadDigest: string;
  /** The authorization the payload carries (all lowercase). */
  readonly authorization: AuthorizationKey;
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const NONCE = /^0x[0-9a-fA-F]{64}$/;

/**
 * The id a payment header names, with what identifies its payload; null when it names none (or
 * the header is not a payload at all: the paywall's own checks refuse that). An id that is present
 * and malformed is PAYMENT_IDENTIFIER_INVALID.
 */
export function identifyPayment(header: string): IdentifiedPayment | null {
  let payload: PaymentPayload;
  try {
    payload = decodePaymentSignatureHeader(header);
  } catch {
    return null;
  }
  if (typeof payload !== 'object' || payload === null) return null;
  const raw = (payload.extensions as Record<string, { info?: { id?: unknown } }> | undefined)?.[
    PAYMENT_IDENTIFIER
  ]?.info?.id;
  if (raw === undefined || raw === null) return null;
  const identifier = extractPaymentIdentifier(payload, false);
  if (identifier === null || !isValidPaymentId(identifier))
    throw new AppError('PAYMENT_IDENTIFIER_INVALID', undefined, [
      {
        field: `extensions.${PAYMENT_IDENTIFIER}.info.id`,
        reason: 'must be 16-128 of [A-Za-z0-9_-]',
      },
    ]);
  const authorization = (payload.payload as { authorization?: Record<string, unknown> } | undefined)
    ?.authorization;
  const { from, nonce } = authorization ?? {};
  const accepted = payload.accepted as { network?: unknown; asset?: unknown } | undefined;
  if (
    typeof from !== 'string' ||
    !ADDRESS.test(from) ||
    typeof nonce !== 'string' ||
    !NONCE.test(nonce) ||
    typeof accepted?.network !== 'string' ||
    typeof accepted.asset !== 'string'
  )
    return null;
  const payloadDigest = createHash('sha256')
    .update(canonicalJson({ accepted: payload.accepted, payload: payload.payload }))
    .digest('hex');
  return {
    identifier,
    payloadDigest,
    authorization: {
      network: accepted.network,
      asset: accepted.asset.toLowerCase(),
      payer: from.toLowerCase(),
      nonce: nonce.toLowerCase(),
    },
  };
}

interface BindingRow {
  payload_digest: string;
  network: string;
  asset: string;
  nonce: string;
}

function conflict(identified: IdentifiedPayment): AppError {
  return new AppError('PAYMENT_IDENTIFIER_CONFLICT', undefined, {
    paymentIdentifier: identified.identifier,
  });
}

/**
 * The authorization an id is bound to, when this payload is the one it is bound to; null when the
 * id is unbound. Another payload under a bound id is PAYMENT_IDENTIFIER_CONFLICT.
 */
export async function boundAuthorization(
  db: Pool,
  identified: IdentifiedPayment,
): Promise<AuthorizationKey | null> {
  const result = await db.query<BindingRow>(
    `SELECT payload_digest, network, asset, nonce FROM gateway.payment_identifiers
      WHERE payer = $1 AND identifier = $2`,
    [identified.authorization.payer, identified.identifier],
  );
  const row = result.rows[0];
  if (!row) return null;
  if (row.payload_digest !== identified.payloadDigest) throw conflict(identified);
  return {
    network: row.network,
    asset: row.asset,
    payer: identified.authorization.payer,
    nonce: row.nonce,
  };
}

/** Binds the id to this payload (first writer wins); PAYMENT_IDENTIFIER_CONFLICT when another payload holds it. */
export async function bindPaymentIdentifier(
  db: Pool,
  identified: IdentifiedPayment,
): Promise<void> {
  const { authorization } = identified;
  await db.query(
    `INSERT INTO gateway.payment_identifiers (payer, identifier, payload_digest, network, asset, nonce)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (payer, identifier) DO NOTHING`,
    [
      authorization.payer,
      identified.identifier,
      identified.payloadDigest,
      authorization.network,
      authorization.asset,
      authorization.nonce,
    ],
  );
  await boundAuthorization(db, identified);
}
