// How the matrix invokes each operation against policy A's records: one entry per row of
// authorization-matrix.ts, a REST request, a GraphQL document or a subscription, built per cell
// (sign-in needs a fresh nonce each time). Inputs are valid, so an answer other than the row's
// class is about who asked, never about what was sent.
import { requestNonce, signSignInMessage } from '../support/siwe';
import { graphql, postJson } from '../support/stack';
import type { ActorName } from './authorization-matrix';
import { type MatrixWorld, TRUST_VENDOR } from './matrixWorld';

export type Invocation =
  | {
      readonly kind: 'rest';
      readonly method: 'GET' | 'POST';
      readonly path: string;
      readonly body?: unknown;
    }
  | {
      /** An MCP tool call over POST /mcp (mcpMatrix.ts derives it from its route's request). */
      readonly kind: 'mcp';
      readonly tool: string;
      readonly arguments: Record<string, unknown>;
    }
  | {
      readonly kind: 'graphql';
      readonly field: string;
      readonly query: string;
      readonly variables?: Record<string, unknown>;
    }
  | {
      readonly kind: 'subscription';
      /** The subscription field, and the fan-out topic unless listenTopic names a keyed one. */
      readonly topic: string;
      readonly listenTopic?: string;
      readonly query: string;
      /** The message that ends a cell that is allowed (a refused one ends with an error). */
      readonly until: (message: Record<string, unknown>) => boolean;
      /** Makes the awaited message happen once the subscription is live. */
      readonly trigger?: () => Promise<void>;
    };

export type Build = (world: MatrixWorld, actor: ActorName) => Invocation | Promise<Invocation>;

const get =
  (path: string): Build =>
  () => ({ kind: 'rest', method: 'GET', path });
/** No consumer intent of A exists in this world yet: a well-formed id nobody holds. */
const UNKNOWN_INTENT = `ci_${'0'.repeat(24)}`;

/** A purchase made elsewhere, for verify_delivery: the body form that needs no intent of A. */
const VERIFY_DELIVERY_CLAIM = {
  capability: 'domains.check',
  params: { domain: 'taken.test' },
  providerAttested: { fields: { domain: 'taken.test', available: false } },
};

/** A reconciliation period around the world's records: the last day and the next hour. */
function periodOfA(world: MatrixWorld): Record<string, string> {
  const iso = (ms: number) => new Date(ms).toISOString().replace(/\.[0-9]{3}Z$/, 'Z');
  return {
    policyId: world.a.policyId,
    from: iso(Date.now() - 86_400_000),
    to: iso(Date.now() + 3_600_000),
  };
}

/** A draft of A's policy that allows no category A buys: every past decision of A changes. */
function whatIfOfA(world: MatrixWorld): Record<string, unknown> {
  return {
    policyId: world.a.policyId,
    draft: { ...world.a.document, categories: { allow: ['matrix-none'], deny: [] } },
  };
}

/** A's buyer, for whom (and TRUST_VENDOR) the matrix world seeds a scoreable history. */
function buyerOfA(world: MatrixWorld): { agentId: string; policyId: string } {
  return {
    agentId: `consumer:${world.a.owner.address.toLowerCase()}`,
    policyId: world.a.policyId,
  };
}

const post =
  (path: string, body: (world: MatrixWorld) => unknown = () => ({})): Build =>
  (world) => ({ kind: 'rest', method: 'POST', path, body: body(world) });

function gql(
  field: string,
  query: string,
  variables: (world: MatrixWorld) => Record<string, unknown> = () => ({}),
): Build {
  return (world) => ({ kind: 'graphql', field, query, variables: variables(world) });
}

/** Owner A signs a fresh sign-in message (for policy A when `consumer`). */
async function signedByOwnerA(
  world: MatrixWorld,
  consumer: boolean,
): Promise<{ message: string; signature: string }> {
  return signSignInMessage(
    world.a.owner,
    await requestNonce(world.stack.url),
    consumer ? { policyId: world.a.policyId } : {},
  );
}

/** A well-formed consumer intent id that no world creates. */
const UNKNOWN_CONSUMER_INTENT = 'ci_00000000000000000000a77a';
const A = (world: MatrixWorld) => ({ id: world.a.policyId });
const treasury = (world: MatrixWorld) => ({
  sourceAsset: world.assets[1],
  sourceAmountAtomic: '1',
  destinationAsset: world.assets[0],
  destinationAmountAtomic: '1',
  idempotencyKey: 'matrix-treasury',
});
const reversal = (world: MatrixWorld) => ({
  groupId: world.groupIdA,
  reason: 'matrix reversal',
  idempotencyKey: 'matrix-reversal',
});
/** A new policy for owner A (another name, so its own policyHash): creating it shows nothing of A. */
const copyOfA = (world: MatrixWorld) => ({ ...world.a.document, name: `${world.a.name} copy` });
let catalogFlips = 0;
let anchorTriggers = 0;

const POLICY_FIELDS = '{ id name owner policyHash }';

export const OPERATIONS: Readonly<Record<string, Build>> = {
  'GET /catalog': get('/catalog'),
  'GET /consumer/catalog': get('/consumer/catalog'),
  'GET /cafe/menu': get('/cafe/menu'),
  'GET /.well-known/x402': get('/.well-known/x402'),
  'GET /agent-registration.json': get('/agent-registration.json'),
  'GET /.well-known/agent-registration.json': get('/.well-known/agent-registration.json'),
  'POST /consumer/auth/nonce': post('/consumer/auth/nonce'),
  'POST /consumer/auth/verify': async (world) => ({
    kind: 'rest',
    method: 'POST',
    path: '/consumer/auth/verify',
    body: await signedByOwnerA(world, true),
  }),
  'POST /owner/auth/verify': async (world) => ({
    kind: 'rest',
    method: 'POST',
    path: '/owner/auth/verify',
    body: await signedByOwnerA(world, false),
  }),
  'GET /consumer/policy': (world) => ({
    kind: 'rest',
    method: 'GET',
    path: `/consumer/policy?policyId=${world.a.policyId}`,
  }),
  'POST /get_ledger': post('/get_ledger', (world) => ({ policyId: world.a.policyId })),
  'POST /consumer/intents': (world, actor) =>
    post('/consumer/intents', () => ({
      capability: 'domains.check',
      params: { domain: `matrix-${actor.toLowerCase()}-${Date.now()}.test` },
    }))(world, actor),
  'GET /consumer/intents': (world) => ({
    kind: 'rest',
    method: 'GET',
    path: `/consumer/intents?policyId=${world.a.policyId}`,
  }),
  'GET /consumer/intents/:intentId': (world) => ({
    kind: 'rest',
    method: 'GET',
    path: `/consumer/intents/${world.consumerIntentsA.read.intentId}`,
  }),
  'POST /consumer/intents/:intentId/approve': (world, actor) =>
    post(`/consumer/intents/${world.consumerIntentsA.approveRest.intentId}/approve`, () => ({
      decision: 'APPROVE',
      intentHash: world.consumerIntentsA.approveRest.intentHash,
    }))(world, actor),
  'POST /create_spend_intent': post('/create_spend_intent', (world) => ({
    policyId: world.a.policyId,
    intent: world.freshIntentA(),
  })),
  'GET /receipt_status/:receiptId': (world) => ({
    kind: 'rest',
    method: 'GET',
    path: `/receipt_status/${world.approved.receiptId}`,
  }),
  'GET /consumer/receipt/:intentId': (world) => ({
    kind: 'rest',
    method: 'GET',
    path: `/consumer/receipt/${world.consumerIntentsA.approveRest.intentId}`,
  }),
  'POST /log_receipt': post('/log_receipt', (world) => ({ receiptId: world.approved.receiptId })),
  'GET /escalation_status/:pollRef': (world) => ({
    kind: 'rest',
    method: 'GET',
    path: `/escalation_status/${world.pollRefA}`,
  }),
  'GET /ping_service': get('/ping_service'),
  'POST /preflight_payment': post('/preflight_payment', (world) => ({
    policyId: world.a.policyId,
    intent: world.freshIntentA(),
  })),
  'POST /detect_duplicate': post('/detect_duplicate', (world) => ({
    policyId: world.a.policyId,
    intentHash: world.approved.intentHash,
  })),
  'POST /verify_delivery': post('/verify_delivery', () => VERIFY_DELIVERY_CLAIM),
  'POST /generate_dispute_packet': post('/generate_dispute_packet', (world) => ({
    intentId: world.consumerIntentsA.read.intentId,
  })),
  'POST /reconcile_agent_spend': post('/reconcile_agent_spend', periodOfA),
  'POST /policy_what_if': post('/policy_what_if', whatIfOfA),
  'GET /reports/ledger.csv': get('/reports/ledger.csv?first=200'),
  'POST /score_vendor': post('/score_vendor', () => ({ provider: TRUST_VENDOR })),
  'POST /score_buyer': post('/score_buyer', buyerOfA),
  'POST /redact_payment_metadata': post('/redact_payment_metadata', () => ({
    metadata: { note: 'ada@example.com' },
  })),
  'POST /cafe/order/latte': post('/cafe/order/latte', () => ({ cupName: 'Matrix' })),
  'POST /builder/suggest_names': post('/builder/suggest_names', () => ({ idea: 'matrix tea' })),
  'POST /builder/brand_pack': post('/builder/brand_pack', () => ({ idea: 'matrix tea' })),
  'POST /builder/check_domains': post('/builder/check_domains', () => ({
    domains: ['matrix.test'],
  })),
  'POST /builder/rank_options': post('/builder/rank_options', () => ({ names: ['matrix'] })),
  'POST /builder/seo_tips': post('/builder/seo_tips', () => ({ name: 'matrix' })),
  'POST /consumer/intents/:intentId/fund': post(`/consumer/intents/${UNKNOWN_INTENT}/fund`),
  'POST /create_spend_policy': post('/create_spend_policy', (world) => ({
    policy: copyOfA(world),
  })),
  'POST /sync_policy_registration': post('/sync_policy_registration', (world) => ({
    policyId: world.a.policyId,
    txHash: world.registrationTxA,
  })),
  'POST /update_policy': post('/update_policy', (world) => ({
    policyId: world.a.policyId,
    policy: world.a.document,
  })),
  'POST /pause_policy': post('/pause_policy', (world) => ({ policyId: world.a.policyId })),
  'POST /resume_policy': post('/resume_policy', (world) => ({ policyId: world.a.policyId })),
  'POST /ledger/treasury_transfer': post('/ledger/treasury_transfer', treasury),
  'POST /ledger/reverse_group': post('/ledger/reverse_group', reversal),
  'POST /consumer/intents/:intentId/execute': post(
    `/consumer/intents/${UNKNOWN_CONSUMER_INTENT}/execute`,
    () => ({}),
  ),
  'POST /consumer/intents/:intentId/resolve': post(
    `/consumer/intents/${UNKNOWN_CONSUMER_INTENT}/resolve`,
    () => ({ outcome: 'PAID', evidence: 'matrix' }),
  ),

  'Query.catalog': gql('catalog', '{ catalog { maturityOrder } }'),
  'Query.provider': gql('provider', '{ provider(id: "spendctl-domains") { id maturity } }'),
  'Query.consumerReceipt': gql(
    'consumerReceipt',
    'query ($i: ID!) { consumerReceipt(intentId: $i) }',
    (world) => ({ i: world.consumerIntentsA.approveRest.intentId }),
  ),
  'Query.capability': gql('capability', '{ capability(id: "domains.check") { id executable } }'),
  'Query.receiptAnchor': gql(
    'receiptAnchor',
    'query ($r: String!) { receiptAnchor(receiptId: $r) }',
    (world) => ({ r: world.approved.receiptId }),
  ),
  'Query.escalationStatus': gql(
    'escalationStatus',
    'query ($p: ID!) { escalationStatus(pollRef: $p) }',
    (world) => ({ p: world.pollRefA }),
  ),
  'Query.consumerIntentFundingTerms': gql(
    'consumerIntentFundingTerms',
    'query ($i: String!) { consumerIntentFundingTerms(intentId: $i) }',
    () => ({ i: UNKNOWN_INTENT }),
  ),
  'Query.verifyDeliveryTerms': gql(
    'verifyDeliveryTerms',
    'query ($i: ID!) { verifyDeliveryTerms(intentId: $i) }',
    (world) => ({ i: world.consumerIntentsA.read.intentId }),
  ),
  'Query.disputePacketTerms': gql(
    'disputePacketTerms',
    'query ($i: ID) { disputePacketTerms(intentId: $i) }',
    (world) => ({ i: world.consumerIntentsA.read.intentId }),
  ),
  'Query.scoreVendorTerms': gql(
    'scoreVendorTerms',
    'query ($p: String) { scoreVendorTerms(provider: $p) }',
    () => ({ p: TRUST_VENDOR }),
  ),
  'Query.scoreVendor': gql(
    'scoreVendor',
    'query ($p: String) { scoreVendor(provider: $p) }',
    () => ({ p: TRUST_VENDOR }),
  ),
  'Query.scoreBuyerTerms': gql(
    'scoreBuyerTerms',
    'query ($a: String, $p: ID) { scoreBuyerTerms(agentId: $a, policyId: $p) }',
    (world) => ({ a: buyerOfA(world).agentId, p: world.a.policyId }),
  ),
  'Query.scoreBuyer': gql(
    'scoreBuyer',
    'query ($a: String, $p: ID) { scoreBuyer(agentId: $a, policyId: $p) }',
    (world) => ({ a: buyerOfA(world).agentId, p: world.a.policyId }),
  ),
  'Query.detectDuplicate': gql(
    'detectDuplicate',
    'query ($p: ID, $h: ID) { detectDuplicate(policyId: $p, intentHash: $h) }',
    (world) => ({
      p: world.a.policyId,
      h: world.approved.intentHash,
    }),
  ),
  'Query.checkDomains': gql('checkDomains', '{ checkDomains(domains: ["matrix.test"]) }'),
  'Query.rankOptions': gql('rankOptions', '{ rankOptions(names: ["matrix"]) }'),
  'Query.seoTips': gql('seoTips', '{ seoTips(name: "matrix") }'),
  'Query.policy': gql('policy', `query ($id: ID!) { policy(id: $id) ${POLICY_FIELDS} }`, A),
  'Query.policyVersion': gql(
    'policyVersion',
    'query ($id: ID!) { policyVersion(policyId: $id, version: 1) { policyId policyHash } }',
    A,
  ),
  'Query.policies': gql('policies', `{ policies(first: 100) { nodes ${POLICY_FIELDS} } }`),
  'Query.consumerPolicy': gql(
    'consumerPolicy',
    `query ($id: ID) { consumerPolicy(policyId: $id) ${POLICY_FIELDS} }`,
    A,
  ),
  'Query.policyLedgerWindow': gql(
    'policyLedgerWindow',
    'query ($id: ID) { policyLedgerWindow(policyId: $id) }',
    A,
  ),
  'Query.spendDecisions': gql(
    'spendDecisions',
    'query ($id: ID!) { spendDecisions(policyId: $id) { nodes { id intentHash } } }',
    A,
  ),
  'Query.policyPendingAnchors': gql(
    'policyPendingAnchors',
    'query ($id: ID!) { policyPendingAnchors(policyId: $id) }',
    A,
  ),
  'Query.spendIntents': gql(
    'spendIntents',
    'query ($id: ID!) { spendIntents(policyId: $id) { nodes { intentHash } } }',
    A,
  ),
  'Query.consumerIntents': gql(
    'consumerIntents',
    'query ($id: ID) { consumerIntents(policyId: $id) { nodes { intentId policyId intentHash } } }',
    A,
  ),
  'Query.consumerIntent': gql(
    'consumerIntent',
    'query ($i: ID!) { consumerIntent(intentId: $i) { intentId policyId intentHash } }',
    (world) => ({ i: world.consumerIntentsA.read.intentId }),
  ),
  'Query.spendDecision': gql(
    'spendDecision',
    'query ($id: ID!) { spendDecision(id: $id) { id intentHash policyId } }',
    (world) => ({ id: world.approved.decisionId }),
  ),
  'Query.spendIntent': gql(
    'spendIntent',
    'query ($h: ID!) { spendIntent(intentHash: $h) { intentHash policyId } }',
    (world) => ({ h: world.approved.intentHash }),
  ),
  'Query.ledgerGroups': gql(
    'ledgerGroups',
    '{ ledgerGroups(first: 200) { nodes { id policyId } } }',
  ),
  'Query.ledgerEntries': gql(
    'ledgerEntries',
    '{ ledgerEntries(first: 200) { nodes { id groupId accountKey } } }',
  ),
  'Query.ledgerBalances': gql(
    'ledgerBalances',
    'query ($id: ID) { ledgerBalances(filter: {policyId: $id}) { kind netAtomic asset { id } } }',
    (world) => ({ id: world.a.policyId }),
  ),
  'Query.policyWhatIf': gql(
    'policyWhatIf',
    'query ($policyId: ID!, $draft: PolicyInput!) { policyWhatIf(policyId: $policyId, draft: $draft) { summary { before { approved } } changed { nodes { intentHash before after } } } }',
    whatIfOfA,
  ),
  'Query.explainDecision': gql(
    'explainDecision',
    'query ($intentHash: String!) { explainDecision(intentHash: $intentHash) { policyId decision amounts { setting approving } } }',
    (world) => ({ intentHash: world.escalatedIntentHashA }),
  ),
  'Query.reconciliation': gql(
    'reconciliation',
    'query ($policyId: ID!, $from: String!, $to: String!) { reconciliation(policyId: $policyId, from: $from, to: $to) }',
    periodOfA,
  ),
  'Query.reconcileAgentSpendTerms': gql(
    'reconcileAgentSpendTerms',
    'query ($policyId: ID!, $from: String!, $to: String!) { reconcileAgentSpendTerms(policyId: $policyId, from: $from, to: $to) }',
    periodOfA,
  ),
  'Query.reconcileAgentSpend': gql(
    'reconcileAgentSpend',
    'query ($policyId: ID!, $from: String!, $to: String!) { reconcileAgentSpend(policyId: $policyId, from: $from, to: $to) }',
    periodOfA,
  ),
  'Query.ledgerGroup': gql(
    'ledgerGroup',
    'query ($id: ID!) { ledgerGroup(id: $id) { id policyId } }',
    (world) => ({ id: world.groupIdA }),
  ),
  'Query.ledgerAccounts': gql('ledgerAccounts', '{ ledgerAccounts(first: 200) { nodes { key } } }'),
  'Query.ledgerAccount': gql(
    'ledgerAccount',
    'query ($k: ID!) { ledgerAccount(key: $k) { key balanceAtomic } }',
    (world) => ({ k: world.obligationAccountA }),
  ),
  'Query.trialBalance': gql('trialBalance', '{ trialBalance { netAtomic } }'),
  'Query.treasuryDrift': gql('treasuryDrift', '{ treasuryDrift { driftAtomic } }'),
  'Query.escalation': gql(
    'escalation',
    'query ($p: ID!) { escalation(pollRef: $p) { pollRef intentHash policyId } }',
    (world) => ({ p: world.pollRefA }),
  ),
  'Query.escalations': gql(
    'escalations',
    '{ escalations(first: 100) { nodes { pollRef intentHash policyId } } }',
  ),
  'Query.unmatchedChannelReplies': gql(
    'unmatchedChannelReplies',
    '{ unmatchedChannelReplies { kind } }',
  ),
  'Query.channelBindings': gql('channelBindings', '{ channelBindings { bindingId address } }'),
  'Query.webhookEndpoints': gql('webhookEndpoints', '{ webhookEndpoints { id policyIds } }'),
  'Query.webhookDeliveries': gql(
    'webhookDeliveries',
    'query ($e: ID!) { webhookDeliveries(endpointId: $e) { nodes { id data } } }',
    (world) => ({ e: world.webhooksA.endpointId }),
  ),

  'Mutation.issueSignInNonce': gql('issueSignInNonce', 'mutation { issueSignInNonce { nonce } }'),
  'Mutation.verifySignIn': async (world) => ({
    kind: 'graphql',
    field: 'verifySignIn',
    query:
      'mutation ($m: String!, $s: String!) { verifySignIn(message: $m, signature: $s, session: OWNER) { address session } }',
    variables: await signedByOwnerA(world, false).then(({ message, signature }) => ({
      m: message,
      s: signature,
    })),
  }),
  'Mutation.createSpendIntent': gql(
    'createSpendIntent',
    'mutation ($p: ID, $i: JSONObject!) { createSpendIntent(policyId: $p, intent: $i) }',
    (world) => ({
      p: world.a.policyId,
      i: world.freshIntentA(),
    }),
  ),
  'Mutation.logReceipt': gql(
    'logReceipt',
    'mutation ($r: String!) { logReceipt(receiptId: $r) }',
    (world) => ({ r: world.approved.receiptId }),
  ),
  'Mutation.preflightPayment': gql(
    'preflightPayment',
    'mutation ($p: ID, $i: JSONObject) { preflightPayment(policyId: $p, intent: $i) }',
    (world) => ({
      p: world.a.policyId,
      i: world.freshIntentA(),
    }),
  ),
  'Mutation.verifyDelivery': gql(
    'verifyDelivery',
    'mutation ($c: String, $p: JSONObject, $a: JSONObject) { verifyDelivery(capability: $c, params: $p, providerAttested: $a) }',
    () => ({
      c: VERIFY_DELIVERY_CLAIM.capability,
      p: VERIFY_DELIVERY_CLAIM.params,
      a: VERIFY_DELIVERY_CLAIM.providerAttested,
    }),
  ),
  'Mutation.generateDisputePacket': gql(
    'generateDisputePacket',
    'mutation ($i: ID) { generateDisputePacket(intentId: $i) }',
    (world) => ({ i: world.consumerIntentsA.read.intentId }),
  ),
  'Mutation.suggestNames': gql('suggestNames', 'mutation { suggestNames(idea: "matrix tea") }'),
  'Mutation.brandPack': gql('brandPack', 'mutation { brandPack(idea: "matrix tea") }'),
  'Mutation.fundConsumerIntent': gql(
    'fundConsumerIntent',
    'mutation ($i: String!) { fundConsumerIntent(intentId: $i) { funding } }',
    () => ({ i: UNKNOWN_INTENT }),
  ),
  'Mutation.setProviderMaturity': gql(
    'setProviderMaturity',
    'mutation { setProviderMaturity(id: "spendctl-domains", maturity: VERIFIED, reason: "matrix") { id } }',
  ),
  'Mutation.setCapabilityMaturity': gql(
    'setCapabilityMaturity',
    'mutation { setCapabilityMaturity(id: "domains.check", maturity: VERIFIED, reason: "matrix") { id } }',
  ),
  'Mutation.recordTreasuryTransfer': gql(
    'recordTreasuryTransfer',
    'mutation ($in: TreasuryTransferInput!) { recordTreasuryTransfer(input: $in) { sourceGroup { id } } }',
    (world) => ({
      in: treasury(world),
    }),
  ),
  'Mutation.reverseLedgerGroup': gql(
    'reverseLedgerGroup',
    'mutation ($g: ID!, $r: String!, $k: String!) { reverseLedgerGroup(groupId: $g, reason: $r, idempotencyKey: $k) { id policyId } }',
    (world) => {
      const { groupId, reason, idempotencyKey } = reversal(world);
      return { g: groupId, r: reason, k: idempotencyKey };
    },
  ),
  'Mutation.executeConsumerIntent': gql(
    'executeConsumerIntent',
    `mutation { executeConsumerIntent(intentId: "${UNKNOWN_CONSUMER_INTENT}") { intent { intentId } } }`,
  ),
  'Mutation.resolveConsumerIntent': gql(
    'resolveConsumerIntent',
    `mutation { resolveConsumerIntent(intentId: "${UNKNOWN_CONSUMER_INTENT}", outcome: "PAID", evidence: "matrix") { intent { intentId } } }`,
  ),
  'Mutation.createPolicy': gql(
    'createPolicy',
    `mutation ($p: JSONObject!) { createPolicy(policy: $p) ${POLICY_FIELDS} }`,
    (world) => ({ p: copyOfA(world) }),
  ),
  'Mutation.requestPolicyRegistration': gql(
    'requestPolicyRegistration',
    'mutation ($id: ID!) { requestPolicyRegistration(policyId: $id) { from policyHash } }',
    A,
  ),
  'Mutation.syncPolicyRegistration': gql(
    'syncPolicyRegistration',
    `mutation ($id: ID!, $tx: String!) { syncPolicyRegistration(policyId: $id, txHash: $tx) ${POLICY_FIELDS} }`,
    (world) => ({
      id: world.a.policyId,
      tx: world.registrationTxA,
    }),
  ),
  'Mutation.updatePolicy': gql(
    'updatePolicy',
    `mutation ($id: ID!, $p: JSONObject!) { updatePolicy(policyId: $id, policy: $p) ${POLICY_FIELDS} }`,
    (world) => ({
      id: world.a.policyId,
      p: world.a.document,
    }),
  ),
  'Mutation.pausePolicy': gql(
    'pausePolicy',
    `mutation ($id: ID!) { pausePolicy(policyId: $id) ${POLICY_FIELDS} }`,
    A,
  ),
  'Mutation.resumePolicy': gql(
    'resumePolicy',
    `mutation ($id: ID!) { resumePolicy(policyId: $id) ${POLICY_FIELDS} }`,
    A,
  ),
  'Mutation.decideEscalation': gql(
    'decideEscalation',
    'mutation ($p: ID!) { decideEscalation(pollRef: $p, decision: DENY) { pollRef intentHash } }',
    (world) => ({
      p: world.decidablePollRefA,
    }),
  ),
  'Mutation.createConsumerIntent': (world, actor) =>
    gql(
      'createConsumerIntent',
      'mutation ($in: JSONObject!) { createConsumerIntent(input: $in) { created intent { intentId policyId } quote decision } }',
      () => ({
        in: {
          capability: 'domains.check',
          params: { domain: `matrix-gql-${actor.toLowerCase()}-${Date.now()}.test` },
        },
      }),
    )(world, actor),
  'Mutation.approveConsumerIntent': gql(
    'approveConsumerIntent',
    'mutation ($i: ID!, $h: String!) { approveConsumerIntent(intentId: $i, decision: APPROVE, intentHash: $h) { intent { intentId policyId } quote decision nextAction } }',
    (world) => ({
      i: world.consumerIntentsA.approveGraphQL.intentId,
      h: world.consumerIntentsA.approveGraphQL.intentHash,
    }),
  ),
  'Mutation.startChannelLink': (world, actor) =>
    gql(
      'startChannelLink',
      'mutation ($a: String) { startChannelLink(kind: EMAIL, address: $a) { binding { bindingId } } }',
      () => ({
        a: `matrix-${actor.toLowerCase()}@example.com`,
      }),
    )(world, actor),
  'Mutation.revokeChannelBinding': gql(
    'revokeChannelBinding',
    'mutation ($id: ID!) { revokeChannelBinding(bindingId: $id) { bindingId address } }',
    (world) => ({
      id: world.bindingA.bindingId,
    }),
  ),
  'Mutation.createWebhookEndpoint': gql(
    'createWebhookEndpoint',
    'mutation { createWebhookEndpoint(input: {url: "http://127.0.0.1:9/x", events: ["policy.changed"]}) { endpoint { id } } }',
  ),
  'Mutation.rotateWebhookSecret': gql(
    'rotateWebhookSecret',
    'mutation ($id: ID!) { rotateWebhookSecret(id: $id) { endpoint { id policyIds } } }',
    (world) => ({ id: world.webhooksA.endpointId }),
  ),
  'Mutation.disableWebhookEndpoint': gql(
    'disableWebhookEndpoint',
    'mutation ($id: ID!) { disableWebhookEndpoint(id: $id) { id policyIds } }',
    (world) => ({ id: world.webhooksA.disableEndpointId }),
  ),
  'Mutation.redeliverWebhook': gql(
    'redeliverWebhook',
    'mutation ($id: ID!) { redeliverWebhook(deliveryId: $id) { id data } }',
    (world) => ({ id: world.webhooksA.deliveryId }),
  ),
  'Mutation.confirmEmailBinding': gql(
    'confirmEmailBinding',
    'mutation { confirmEmailBinding(bindingId: "chb_000000000000000000000000", code: "000000000000000000000000") { outcome } }',
  ),
  'Mutation.receiveChatMessage': gql(
    'receiveChatMessage',
    'mutation { receiveChatMessage(channel: TELEGRAM, chatId: "1", text: "approve 000000") { outcome } }',
  ),
  'Mutation.receiveWebhookRequest': gql(
    'receiveWebhookRequest',
    'mutation { receiveWebhookRequest(timestamp: "1", signature: "v1=00", rawBody: "{}") { outcome } }',
  ),

  'Subscription.catalogChanged': (world) => {
    catalogFlips += 1;
    const maturity = catalogFlips % 2 === 1 ? 'EXPERIMENTAL' : 'SANDBOX';
    return {
      kind: 'subscription',
      topic: 'catalogChanged',
      query: 'subscription { catalogChanged { kind id maturity } }',
      until: (message) => message.id === 'travel.search' && message.maturity === maturity,
      trigger: async () => {
        const set = `mutation { setCapabilityMaturity(id: "travel.search", maturity: ${maturity}, reason: "matrix") { id } }`;
        const answer = await graphql(world.stack.url, set, {}, world.stack.adminToken);
        if (answer.body.errors)
          throw new Error(`catalog trigger refused: ${JSON.stringify(answer.body.errors)}`);
      },
    };
  },
  'Subscription.escalationUpdated': (world, actor) => ({
    kind: 'subscription',
    topic: 'escalationUpdated',
    query: 'subscription { escalationUpdated { pollRef intentHash policyId } }',
    // The snapshot is oldest first and A's escalations are older than B's: B's own ends owner B's
    // cell only after anything of A's would have arrived.
    until: (message) => message.pollRef === (actor === 'ownerB' ? world.pollRefB : world.pollRefA),
  }),
  'Subscription.anchorUpdated': (world) => ({
    kind: 'subscription',
    topic: 'anchorUpdated',
    listenTopic: `anchorUpdated:${world.approved.receiptId}`,
    query: `subscription { anchorUpdated(receiptId: "${world.approved.receiptId}") }`,
    until: (message) => message.receiptId === world.approved.receiptId,
  }),
  'Subscription.anchorsUpdated': (world) => {
    anchorTriggers += 1;
    return {
      kind: 'subscription',
      topic: 'anchorsUpdated',
      listenTopic: `anchorsUpdated:${world.a.policyId}`,
      query: `subscription { anchorsUpdated(policyId: "${world.a.policyId}") }`,
      until: (message) => message.state === 'PENDING',
      // A's consumer creates a purchase (its preflight issues a decision receipt of A); decision
      // receipts are announced when their batch settles, and this world runs no anchoring
      // worker, so the announcement is made here with the trigger's own function (a real NOTIFY
      // on commit; the gateway reads the anchor object afresh, as for a settled batch).
      trigger: async () => {
        const created = await postJson(
          world.stack.url,
          '/consumer/intents',
          { capability: 'domains.check', params: { domain: `anchors-${anchorTriggers}.test` } },
          world.tokens.consumerA!,
        );
        if (created.status !== 201)
          throw new Error(`anchor trigger refused: ${JSON.stringify(created.body)}`);
        await world.stack.db.adminPool.query(
          "SELECT intent.notify_receipt_anchor(ARRAY[$1], 'PENDING')",
          [created.body.decision.receiptId],
        );
      },
    };
  },
};
