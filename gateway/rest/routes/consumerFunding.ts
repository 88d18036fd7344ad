// POST /consumer/intents/:intentId/fund: the x402 paid route priced per intent. Its terms come
// from the intent subgraph before any 402 (the session's own intent, AWAITING_FUNDING, quote
// fresh: otherwise 404 / 409 and never a charge): amount = the intent's funding amount exactly,
// asset = the funding rail's token, payTo = the funding treasury. The payment is booked as FUNDING
// consuming the intent's reservation, and the intent is FUNDED, in one transaction (paywall →
// books.ts → the intent subgraph); the paid call answers {intent, funding}. A malformed intentId is
// a 400 before any of it (requestGuards.ts checkPathIds).
import { refusalFromData } from '../refusal';
import type { RequestTerms, RestInput, RouteDefinition } from '../types';

function intentIdOf(input: RestInput): string {
  return input.params.intentId ?? '';
}

/** The terms field's JSON, as the paywall takes it. */
function readTerms(data: Record<string, unknown>): RequestTerms {
  const terms = data.consumerIntentFundingTerms as Record<string, unknown>;
  return {
    amountAtomic: typeof terms.amountAtomic === 'string' ? BigInt(terms.amountAtomic) : null,
    network: String(terms.network),
    asset: String(terms.asset),
    payTo: String(terms.payTo),
    funding: { policyId: String(terms.policyId), intentRef: String(terms.intentId) },
    refusal: refusalFromData(terms.refusal, 'INTENT_NOT_FUNDABLE'),
  };
}

export const fundConsumerIntentRoute: RouteDefinition = {
  method: 'POST',
  path: '/consumer/intents/:intentId/fund',
  purpose:
    'fund a consumer intent AWAITING_FUNDING: x402 on eip155:196 for exactly its funding amount, paid to the funding treasury; answers {intent, funding} with the intent FUNDED',
  group: 'consumer',
  auth: 'consumer',
  price: {
    kind: 'dynamic',
    basis:
      'the intent’s funding amount (provider cost + fee + spread), paid to the funding treasury',
    terms: {
      document: 'consumerFundingTerms',
      operationName: 'ConsumerFundingTerms',
      variables: (input) => ({ intentId: intentIdOf(input) }),
      read: readTerms,
    },
  },
  operation: {
    document: 'fundConsumerIntent',
    operationName: 'FundConsumerIntent',
    variables: (input) => ({ intentId: intentIdOf(input) }),
    respond: (data) => ({ status: 200, body: data.fundConsumerIntent }),
  },
};
