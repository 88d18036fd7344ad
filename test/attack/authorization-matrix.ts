// Who may do what: every operation of the public surface (each REST route of the table, each
// Query, Mutation and Subscription field of the GraphQL API) against policy A's records, for each
// of six actors. authorization.test.ts runs every cell on the real stack, fails on an operation
// without a row (or a row without an operation), and checks that no refused or unrelated answer
// carries policy A's data. This table is the contract; docs/security.md explains it.

export const ACTORS = ['anonymous', 'consumerA', 'consumerB', 'ownerA', 'ownerB', 'admin'] as const;
export type ActorName = (typeof ACTORS)[number];

/**
 * A   allowed, and the answer holds policy A's data the caller did not send
 * ok  allowed, and the answer holds nothing of policy A beyond what the caller sent
 * 401 refused: a credential is needed (REST status; GraphQL extensions.code of a 401 code)
 * 403 refused: this credential may not (403)
 * 404 hidden, exactly as if it did not exist (REST 404; GraphQL null, or a 404 code)
 * 402 priced: REST answers the x402 challenge; GraphQL refuses it (no data): unreachable unpaid
 */
export type Expected = 'A' | 'ok' | '401' | '403' | '404' | '402';
export type Row = Readonly<Record<ActorName, Expected>>;

function row(
  anonymous: Expected,
  consumerA: Expected,
  consumerB: Expected,
  ownerA: Expected,
  ownerB: Expected,
  admin: Expected,
): Row {
  return { anonymous, consumerA, consumerB, ownerA, ownerB, admin };
}

const PAID = row('402', '402', '402', '402', '402', '402');
const PUBLIC = row('ok', 'ok', 'ok', 'ok', 'ok', 'ok');
const PUBLIC_A = row('A', 'A', 'A', 'A', 'A', 'A');
const ADMIN_ROUTE = row('401', '401', '401', '401', '401', 'A');
const ADMIN_ROUTE_OK = row('401', '401', '401', '401', '401', 'ok');
const ADMIN_FIELD = row('401', '403', '403', '403', '403', 'A');
const ADMIN_FIELD_OK = row('401', '403', '403', '403', '403', 'ok');
const OWNER_WRITE = row('401', '403', '403', 'A', '404', 'A');
const OWNER_READ = row('401', '403', '403', 'A', '403', 'A');
const LEDGER_READER = row('401', 'A', '403', 'A', '403', 'A');
const CHANNEL_ACTOR_ONLY = row('401', '403', '403', '403', '403', '403');

export const MATRIX: Readonly<Record<string, Row>> = {
  //                                          anonymous consumerA consumerB ownerA  ownerB  admin
  // REST: the route table (free, priced, admin, consumer routes).
  'GET /catalog': PUBLIC,
  'GET /consumer/catalog': PUBLIC,
  'GET /cafe/menu': PUBLIC,
  'GET /.well-known/x402': PUBLIC,
  'GET /agent-registration.json': PUBLIC,
  'GET /.well-known/agent-registration.json': PUBLIC,
  'POST /consumer/auth/nonce': PUBLIC,
  'POST /consumer/auth/verify': PUBLIC,
  'POST /owner/auth/verify': PUBLIC,
  'GET /consumer/policy': row('401', 'A', '403', 'A', '404', 'A'),
  'POST /get_ledger': LEDGER_READER,
  'POST /consumer/intents': row('401', 'A', 'ok', '403', '403', '403'),
  'GET /consumer/intents': row('401', 'A', '403', 'A', 'ok', 'A'),
  'GET /consumer/intents/:intentId': row('401', 'A', '404', 'A', '404', 'A'),
  'POST /consumer/intents/:intentId/approve': row('401', '403', '403', 'A', '404', '403'),
  'POST /create_spend_intent': PUBLIC,
  'GET /receipt_status/:receiptId': PUBLIC,
  // Public, and the world's intents are not funded: no receipt yet, the same 404 for everyone.
  'GET /consumer/receipt/:intentId': row('404', '404', '404', '404', '404', '404'),
  'POST /log_receipt': PUBLIC,
  'GET /escalation_status/:pollRef': PUBLIC_A,
  'GET /ping_service': PAID,
  'POST /preflight_payment': PAID,
  'POST /detect_duplicate': PAID,
  // Scores: a vendor's for anyone who pays; a buyer's only for those who may read the policy.
  'POST /score_vendor': PAID,
  'POST /score_buyer': row('401', '402', '403', '402', '403', '402'),
  'POST /verify_delivery': PAID,
  // A's intent: its readers are offered the payment; anyone else gets the 404 before any 402.
  'POST /generate_dispute_packet': row('401', '402', '404', '402', '404', '402'),
  // Who may reconcile A is asked before any 402: another policy's caller is refused, never charged.
  'POST /reconcile_agent_spend': row('401', '402', '403', '402', '403', '402'),
  'POST /policy_what_if': row('401', '403', '403', 'A', '404', 'A'),
  'GET /reports/ledger.csv': row('401', 'A', 'ok', 'A', 'ok', 'A'),
  'POST /redact_payment_metadata': PAID,
  'POST /cafe/order/latte': PAID,
  // The launch pack: priced names and pack, free checks, ranking and tips; nothing of any policy.
  'POST /builder/suggest_names': PAID,
  'POST /builder/brand_pack': PAID,
  'POST /builder/check_domains': PUBLIC,
  'POST /builder/rank_options': PUBLIC,
  'POST /builder/seo_tips': PUBLIC,
  // Funding a consumer intent (none of A's exists in this world): a session needed, else hidden.
  'POST /consumer/intents/:intentId/fund': row('401', '404', '404', '404', '404', '404'),
  'POST /create_spend_policy': ADMIN_ROUTE_OK,
  'POST /sync_policy_registration': ADMIN_ROUTE,
  'POST /update_policy': ADMIN_ROUTE,
  'POST /pause_policy': ADMIN_ROUTE,
  'POST /resume_policy': ADMIN_ROUTE,
  'POST /ledger/treasury_transfer': ADMIN_ROUTE_OK,
  'POST /ledger/reverse_group': ADMIN_ROUTE,
  // The world holds no consumer intent yet: an unknown one is hidden from everyone allowed to ask.
  'POST /consumer/intents/:intentId/execute': row('401', '404', '404', '403', '403', '403'),
  'POST /consumer/intents/:intentId/resolve': row('401', '401', '401', '401', '401', '404'),

  // GraphQL queries.
  'Query.catalog': PUBLIC,
  'Query.provider': PUBLIC,
  'Query.capability': PUBLIC,
  'Query.consumerReceipt': row('404', '404', '404', '404', '404', '404'),
  'Query.receiptAnchor': PUBLIC,
  'Query.escalationStatus': PUBLIC_A,
  'Query.detectDuplicate': PAID,
  'Query.checkDomains': PUBLIC,
  'Query.rankOptions': PUBLIC,
  'Query.seoTips': PUBLIC,
  'Query.consumerIntentFundingTerms': row('401', '404', '404', '404', '404', '404'),
  // verify_delivery's free check of A's intent: its readers learn only that it is not ready yet.
  'Query.verifyDeliveryTerms': row('401', 'ok', '404', 'ok', '404', 'ok'),
  // generate_dispute_packet's free check of A's intent: its readers learn only that it may be bought.
  'Query.disputePacketTerms': row('401', 'ok', '404', 'ok', '404', 'ok'),
  // The scores' free checks before any 402: the answer is only whether a score can be given.
  'Query.scoreVendorTerms': PUBLIC,
  'Query.scoreBuyerTerms': row('401', 'ok', '403', 'ok', '403', 'ok'),
  'Query.scoreVendor': PAID,
  'Query.scoreBuyer': PAID,
  'Query.policy': row('404', '404', '404', 'A', '404', 'A'),
  'Query.policyVersion': row('404', '404', '404', 'A', '404', 'A'),
  'Query.policies': row('401', '403', '403', 'A', 'ok', 'A'),
  'Query.consumerPolicy': row('401', 'A', '403', 'A', '404', 'A'),
  'Query.policyLedgerWindow': LEDGER_READER,
  'Query.spendDecisions': OWNER_READ,
  // A's unsettled receipts; A's id is in the request, and the world's receipts may all be settled.
  'Query.policyPendingAnchors': row('401', '403', '403', 'ok', '403', 'ok'),
  'Query.spendIntents': OWNER_READ,
  'Query.spendDecision': row('404', '404', '404', 'A', '404', 'A'),
  'Query.spendIntent': row('404', '404', '404', '404', '404', 'A'),
  'Query.consumerIntents': row('401', 'A', '403', 'A', 'ok', 'A'),
  'Query.consumerIntent': row('401', 'A', '404', 'A', '404', 'A'),
  'Query.ledgerGroups': row('401', 'A', 'ok', 'A', 'ok', 'A'),
  'Query.ledgerEntries': row('401', 'A', 'ok', 'A', 'ok', 'A'),
  // Sums per account kind of A's entries: A's money, but nothing that names A beyond what was sent.
  'Query.ledgerBalances': row('401', 'ok', '403', 'ok', '403', 'ok'),
  'Query.reconciliation': row('401', 'ok', '403', 'ok', '403', 'ok'),
  'Query.policyWhatIf': row('401', '403', '403', 'A', '404', 'A'),
  'Query.explainDecision': row('401', '403', '403', 'A', '404', 'A'),
  'Query.reconcileAgentSpendTerms': row('401', 'ok', '403', 'ok', '403', 'ok'),
  'Query.reconcileAgentSpend': PAID,
  'Query.ledgerGroup': row('401', 'A', '404', 'A', '404', 'A'),
  'Query.ledgerAccounts': ADMIN_FIELD,
  'Query.ledgerAccount': ADMIN_FIELD_OK,
  'Query.trialBalance': ADMIN_FIELD_OK,
  'Query.treasuryDrift': ADMIN_FIELD_OK,
  'Query.escalation': row('401', '403', '403', 'A', '404', 'A'),
  'Query.escalations': row('401', '403', '403', 'A', 'ok', 'A'),
  'Query.unmatchedChannelReplies': row('401', '403', '403', 'ok', 'ok', '403'),
  'Query.channelBindings': row('401', '403', '403', 'A', 'ok', '403'),
  'Query.webhookEndpoints': row('401', '403', '403', 'A', 'ok', '403'),
  'Query.webhookDeliveries': row('401', '403', '403', 'A', '404', '403'),

  // GraphQL mutations (refusals run before allowed cells, so a refused write never changed A first).
  'Mutation.issueSignInNonce': PUBLIC,
  'Mutation.verifySignIn': PUBLIC,
  'Mutation.createSpendIntent': PUBLIC,
  'Mutation.logReceipt': PUBLIC,
  'Mutation.preflightPayment': PAID,
  'Mutation.fundConsumerIntent': PAID,
  'Mutation.verifyDelivery': PAID,
  'Mutation.generateDisputePacket': PAID,
  'Mutation.suggestNames': PAID,
  'Mutation.brandPack': PAID,
  'Mutation.setProviderMaturity': ADMIN_FIELD_OK,
  'Mutation.setCapabilityMaturity': ADMIN_FIELD_OK,
  'Mutation.recordTreasuryTransfer': ADMIN_FIELD_OK,
  'Mutation.reverseLedgerGroup': ADMIN_FIELD,
  'Mutation.executeConsumerIntent': row('401', '404', '404', '403', '403', '403'),
  'Mutation.resolveConsumerIntent': row('401', '403', '403', '403', '403', '404'),
  'Mutation.createPolicy': row('401', '403', '403', 'ok', '403', 'ok'),
  'Mutation.requestPolicyRegistration': OWNER_WRITE,
  'Mutation.syncPolicyRegistration': OWNER_WRITE,
  'Mutation.updatePolicy': OWNER_WRITE,
  'Mutation.pausePolicy': OWNER_WRITE,
  'Mutation.resumePolicy': OWNER_WRITE,
  'Mutation.decideEscalation': row('401', '403', '403', 'A', '404', '403'),
  'Mutation.createConsumerIntent': row('401', 'A', 'ok', '403', '403', '403'),
  'Mutation.approveConsumerIntent': row('401', '403', '403', 'A', '404', '403'),
  'Mutation.startChannelLink': row('401', '403', '403', 'ok', 'ok', '403'),
  'Mutation.revokeChannelBinding': row('401', '403', '403', 'A', '404', '403'),
  'Mutation.createWebhookEndpoint': row('401', '403', '403', 'ok', 'ok', '403'),
  'Mutation.rotateWebhookSecret': row('401', '403', '403', 'A', '404', '403'),
  'Mutation.disableWebhookEndpoint': row('401', '403', '403', 'A', '404', '403'),
  'Mutation.redeliverWebhook': row('401', '403', '403', 'A', '404', '403'),
  'Mutation.confirmEmailBinding': CHANNEL_ACTOR_ONLY,
  'Mutation.receiveChatMessage': CHANNEL_ACTOR_ONLY,
  'Mutation.receiveWebhookRequest': CHANNEL_ACTOR_ONLY,

  // GraphQL subscriptions (websocket).
  'Subscription.catalogChanged': PUBLIC,
  'Subscription.escalationUpdated': row('401', '403', '403', 'A', 'ok', 'A'),
  'Subscription.anchorUpdated': PUBLIC,
  'Subscription.anchorsUpdated': row('401', '403', '403', 'ok', '404', 'ok'),
};
