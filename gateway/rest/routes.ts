// The REST route table: every path the service serves, exactly as the spec writes it, with its
// price (written here once), who may call it, and the persisted GraphQL operation behind it.
// /catalog and /openapi.json are generated from this table.
import { AppError } from '../../core/errors';
import { registrationCard } from './identity';
import { consumerPolicyBody, operatorPolicyBody, sessionBody } from './policyMapping';
import { type BodyField, bodyFields, queryValue, stringFields } from './requestBodies';
import { serviceMap } from './serviceMap';
import { redactPaymentMetadata } from '../../core/privacy/redact';
import { intentBody } from './intentBodies';
import { BUNDLED, FREE, type RestInput, type RouteDefinition, usdt0 } from './types';
import { cafeMenu, orderLatte, validateLatteOrder } from './cafe';
import { x402Discovery } from '../x402/discovery';

type Json = Record<string, unknown>;

function lowerMaturity(value: unknown): unknown {
  return typeof value === 'string' ? value.toLowerCase() : value;
}

interface CatalogCapability {
  id: string;
  maturity: string;
  effectiveMaturity: string;
  movesMoney: boolean;
  executable: boolean;
  refusalCode: string | null;
  gateCode: string | null;
  provider: { id: string };
}

interface CatalogProvider {
  id: string;
  name: string;
  kind: string;
  maturity: string;
  executableToday: boolean;
  capabilities: Array<{ id: string }>;
}

interface CatalogData {
  catalog: {
    providers: CatalogProvider[];
    capabilities: CatalogCapability[];
    gatedRails: Array<{ rail: string; refusalCode: string }>;
    maturityOrder: string[];
    execution: { providersExecutableToday: string[] };
  };
}

/** The consumer catalog: maturities as the spec writes them (lowercase) plus the execution object. */
export function consumerCatalogBody(data: CatalogData): Json {
  const { catalog } = data;
  return {
    maturityOrder: catalog.maturityOrder.map(lowerMaturity),
    providers: catalog.providers.map((provider) => ({
      id: provider.id,
      name: provider.name,
      kind: provider.kind,
      maturity: lowerMaturity(provider.maturity),
      executableToday: provider.executableToday,
      capabilities: provider.capabilities.map((capability) => capability.id),
    })),
    capabilities: catalog.capabilities.map((capability) => ({
      id: capability.id,
      providerId: capability.provider.id,
      maturity: lowerMaturity(capability.maturity),
      effectiveMaturity: lowerMaturity(capability.effectiveMaturity),
      movesMoney: capability.movesMoney,
      executable: capability.executable,
      refusalCode: capability.refusalCode,
    })),
    gatedRails: catalog.gatedRails,
    execution: { providersExecutableToday: catalog.execution.providersExecutableToday },
  };
}

const POLICY_ID_FIELD: BodyField = { name: 'policyId', kind: 'policyId', required: true };

const SIGN_IN_FIELDS: readonly BodyField[] = [
  { name: 'message', required: true },
  { name: 'signature', required: true },
];

function noInput(input: RestInput): Record<string, never> {
  if (
    input.body !== undefined &&
    input.body !== null &&
    typeof input.body === 'object' &&
    Object.keys(input.body).length > 0
  ) {
    throw new AppError('REQUEST_INVALID', 'This route takes no request body.');
  }
  return {};
}

/** A receiptId is 0x + 64 hex; anything else is RECEIPT_ID_INVALID before any lookup. */
function receiptIdParam(value: unknown): string {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(value))
    throw new AppError('RECEIPT_ID_INVALID', undefined, { receiptId: value ?? null });
  return value;
}

const LATTE_PRICE = usdt0('0.04');

/** A pollRef is esc_ + 24 hex; anything else is ESCALATION_NOT_FOUND before any lookup. */
function escalationPollRefParam(value: unknown): string {
  if (typeof value !== 'string' || !/^esc_[0-9a-f]{24}$/.test(value))
    throw new AppError('ESCALATION_NOT_FOUND', undefined, { pollRef: value ?? null });
  return value;
}

export function buildRoutes(): RouteDefinition[] {
  return [
    {
      method: 'GET',
      path: '/ping_service',
      purpose: 'health and payment-rail proof: a paid call that answers ok with the tool name',
      group: 'control-plane',
      auth: 'public',
      price: usdt0('0.01'),
      validate: (input) => {
        noInput(input);
      },
      handler: () => ({
        status: 200,
        body: { ok: true, tool: 'ping_service', ts: new Date().toISOString() },
      }),
    },
    {
      method: 'GET',
      path: '/catalog',
      purpose: 'machine-readable service map: every route with its method, price and purpose',
      group: 'control-plane',
      auth: 'public',
      price: FREE,
      handler: (_input, service, routes) => ({ status: 200, body: serviceMap(service, routes) }),
    },
    {
      method: 'GET',
      path: '/consumer/catalog',
      purpose:
        'live catalog of providers and capabilities with maturities and the execution object',
      group: 'consumer',
      auth: 'public',
      price: FREE,
      operation: {
        document: 'catalog',
        operationName: 'Catalog',
        variables: noInput,
        respond: (data) => ({
          status: 200,
          body: consumerCatalogBody(data as unknown as CatalogData),
        }),
      },
    },
    {
      method: 'GET',
      path: '/consumer/policy',
      purpose:
        'the session’s bound policy: id, version, status, policyHash and limits (?policyId= without a session only where CONSUMER_AUTH_REQUIRED=0)',
      group: 'consumer',
      auth: 'consumer',
      price: FREE,
      operation: {
        document: 'consumerPolicy',
        operationName: 'ConsumerPolicy',
        variables: (input) => ({ policyId: queryValue(input, 'policyId') }),
        respond: (data) => ({ status: 200, body: consumerPolicyBody(data.consumerPolicy) }),
      },
    },
    {
      method: 'POST',
      path: '/consumer/auth/nonce',
      purpose:
        'a server-generated, single-use sign-in nonce (10 minutes) with the domain, chain id and resource format the SIWE message must name',
      group: 'consumer',
      auth: 'public',
      price: FREE,
      rateLimit: 'sign-in',
      operation: {
        document: 'issueSignInNonce',
        operationName: 'IssueSignInNonce',
        variables: noInput,
        respond: (data) => ({ status: 200, body: data.issueSignInNonce }),
      },
    },
    {
      method: 'POST',
      path: '/consumer/auth/verify',
      purpose:
        'verifies a signed SIWE message naming svc:policy:<policyId> and returns a 30-minute bearer bound to that one policy',
      group: 'consumer',
      auth: 'public',
      price: FREE,
      rateLimit: 'sign-in',
      operation: {
        document: 'verifySignIn',
        operationName: 'VerifySignIn',
        variables: (input) => ({ ...stringFields(input, SIGN_IN_FIELDS), session: 'CONSUMER' }),
        respond: (data, _input, edge) => ({
          status: 200,
          body: sessionBody(data.verifySignIn, 'CONSUMER', edge),
        }),
      },
    },
    {
      method: 'POST',
      path: '/owner/auth/verify',
      purpose:
        'the dashboard sign-in: verifies a signed SIWE message naming no policy and returns a 30-minute owner bearer for every policy the address owns',
      group: 'owner',
      auth: 'public',
      price: FREE,
      rateLimit: 'sign-in',
      operation: {
        document: 'verifySignIn',
        operationName: 'VerifySignIn',
        variables: (input) => ({ ...stringFields(input, SIGN_IN_FIELDS), session: 'OWNER' }),
        respond: (data, _input, edge) => ({
          status: 200,
          body: sessionBody(data.verifySignIn, 'OWNER', edge),
        }),
      },
    },
    {
      method: 'POST',
      path: '/create_spend_intent',
      purpose:
        'validate a SpendIntent (per-field INTENT_MALFORMED), bind it to the policy and store it; returns its intentHash and canonical form',
      group: 'control-plane',
      auth: 'public',
      price: BUNDLED,
      operation: {
        document: 'createSpendIntent',
        operationName: 'CreateSpendIntent',
        variables: (input) => intentBody(input, { allowHash: false }),
        respond: (data) => ({ status: 200, body: data.createSpendIntent }),
      },
    },
    {
      method: 'POST',
      path: '/preflight_payment',
      purpose:
        'evaluate an intent (or a stored intentHash) against the policy: decision, 14-rule trace, reservation on APPROVED, receiptId',
      group: 'control-plane',
      auth: 'public',
      price: usdt0('0.05'),
      operation: {
        document: 'preflightPayment',
        operationName: 'PreflightPayment',
        variables: (input) => intentBody(input, { allowHash: true }),
        respond: (data) => ({ status: 200, body: data.preflightPayment }),
      },
    },
    {
      method: 'POST',
      path: '/detect_duplicate',
      purpose:
        'whether an approved intent with the same duplicate key tuple lies inside the policy’s window: prior intentHash, seconds left, keys matched',
      group: 'control-plane',
      auth: 'public',
      price: usdt0('0.02'),
      operation: {
        document: 'detectDuplicate',
        operationName: 'DetectDuplicate',
        variables: (input) => intentBody(input, { allowHash: true }),
        respond: (data) => ({ status: 200, body: data.detectDuplicate }),
      },
    },
    {
      method: 'POST',
      path: '/get_ledger',
      purpose:
        'a policy’s spend window: settled and reserved today, effective usage, remaining budget, calls in the last hour, recent intents (admin, owner or the policy’s consumer session)',
      group: 'control-plane',
      auth: 'consumer',
      price: FREE,
      operation: {
        document: 'getLedger',
        operationName: 'GetLedger',
        variables: (input) => bodyFields(input, [POLICY_ID_FIELD]),
        respond: (data) => ({ status: 200, body: data.policyLedgerWindow }),
      },
    },
    {
      method: 'GET',
      path: '/receipt_status/:receiptId',
      purpose:
        'the anchor object of a decision receipt: PENDING {receiptId}, or NOT_FOUND {receiptId} for an id never issued',
      group: 'control-plane',
      auth: 'public',
      price: FREE,
      operation: {
        document: 'receiptStatus',
        operationName: 'ReceiptStatus',
        variables: (input) => ({ receiptId: receiptIdParam(input.params.receiptId) }),
        respond: (data) => ({ status: 200, body: data.receiptAnchor }),
      },
    },
    {
      method: 'GET',
      path: '/escalation_status/:pollRef',
      purpose:
        'poll an escalation: PENDING, APPROVED, DENIED or EXPIRED (outcome DENIED, reason ESCALATION_EXPIRED_DEFAULT_DENY), with its intentHash, amount and times',
      group: 'control-plane',
      auth: 'public',
      price: FREE,
      operation: {
        document: 'escalationStatus',
        operationName: 'EscalationStatus',
        variables: (input) => ({ pollRef: escalationPollRefParam(input.params.pollRef) }),
        respond: (data) => ({ status: 200, body: data.escalationStatus }),
      },
    },
    {
      method: 'POST',
      path: '/log_receipt',
      purpose: 'log a decision receipt for anchoring; answers its anchor object',
      group: 'control-plane',
      auth: 'public',
      price: FREE,
      operation: {
        document: 'logReceipt',
        operationName: 'LogReceipt',
        variables: (input) => ({
          receiptId: receiptIdParam(
            bodyFields(input, [{ name: 'receiptId', required: false }]).receiptId,
          ),
        }),
        respond: (data) => ({ status: 200, body: data.logReceipt }),
      },
    },
    {
      method: 'POST',
      path: '/redact_payment_metadata',
      purpose:
        'strip emails, phone numbers, API keys, bearer tokens, card numbers and IBANs from metadata; returns it with its metadataHash (stores nothing)',
      group: 'control-plane',
      auth: 'public',
      price: usdt0('0.02'),
      validate: (input) => {
        bodyFields(input, [{ name: 'metadata', kind: 'object', required: true }]);
      },
      handler: (input) => {
        const { metadata } = bodyFields(input, [
          { name: 'metadata', kind: 'object', required: true },
        ]);
        return { status: 200, body: redactPaymentMetadata(metadata) };
      },
    },
    {
      method: 'POST',
      path: '/create_spend_policy',
      purpose:
        'create a spend policy from its document (owner inside it): version 1, ACTIVE, policyId derived from owner and owner nonce',
      group: 'operator',
      auth: 'admin',
      price: FREE,
      operation: {
        document: 'createSpendPolicy',
        operationName: 'CreateSpendPolicy',
        variables: (input) =>
          bodyFields(input, [{ name: 'policy', kind: 'object', required: true }]),
        respond: (data) => ({ status: 201, body: operatorPolicyBody(data.createPolicy) }),
      },
    },
    {
      method: 'POST',
      path: '/update_policy',
      purpose:
        'replace a policy’s rules: a new version with a new policyHash; the old version stays readable',
      group: 'operator',
      auth: 'admin',
      price: FREE,
      operation: {
        document: 'updatePolicy',
        operationName: 'UpdatePolicy',
        variables: (input) =>
          bodyFields(input, [POLICY_ID_FIELD, { name: 'policy', kind: 'object', required: true }]),
        respond: (data) => ({ status: 200, body: operatorPolicyBody(data.updatePolicy) }),
      },
    },
    {
      method: 'POST',
      path: '/pause_policy',
      purpose: 'pause a policy: every intent against it is blocked until it is resumed',
      group: 'operator',
      auth: 'admin',
      price: FREE,
      operation: {
        document: 'pausePolicy',
        operationName: 'PausePolicy',
        variables: (input) => bodyFields(input, [POLICY_ID_FIELD]),
        respond: (data) => ({ status: 200, body: operatorPolicyBody(data.pausePolicy) }),
      },
    },
    {
      method: 'POST',
      path: '/resume_policy',
      purpose: 'resume a paused policy',
      group: 'operator',
      auth: 'admin',
      price: FREE,
      operation: {
        document: 'resumePolicy',
        operationName: 'ResumePolicy',
        variables: (input) => bodyFields(input, [POLICY_ID_FIELD]),
        respond: (data) => ({ status: 200, body: operatorPolicyBody(data.resumePolicy) }),
      },
    },
    {
      method: 'POST',
      path: '/sync_policy_registration',
      purpose:
        'record a confirmed on-chain PolicyRegistry registration (chain id, tx, block) after checking its policyHash',
      group: 'operator',
      auth: 'admin',
      price: FREE,
      // Reads the transaction receipt from the funding chain's RPC.
      rateLimit: 'outbound',
      operation: {
        document: 'syncPolicyRegistration',
        operationName: 'SyncPolicyRegistration',
        variables: (input) =>
          bodyFields(input, [POLICY_ID_FIELD, { name: 'txHash', required: true }]),
        respond: (data) => ({ status: 200, body: operatorPolicyBody(data.syncPolicyRegistration) }),
      },
    },
    {
      method: 'POST',
      path: '/ledger/treasury_transfer',
      purpose:
        'record a manual float replenishment between rails as a TREASURY_TRANSFER group pair (audited)',
      group: 'operator',
      auth: 'admin',
      price: FREE,
      operation: {
        document: 'ledgerTreasuryTransfer',
        operationName: 'LedgerTreasuryTransfer',
        variables: (input) => ({
          input: stringFields(input, [
            { name: 'sourceAsset', required: true },
            { name: 'sourceAmountAtomic', required: true },
            { name: 'destinationAsset', required: true },
            { name: 'destinationAmountAtomic', required: true },
            { name: 'idempotencyKey', required: true },
            { name: 'memo', required: false },
          ]),
        }),
        respond: (data) => ({ status: 200, body: data.recordTreasuryTransfer }),
      },
    },
    {
      method: 'POST',
      path: '/ledger/reverse_group',
      purpose:
        'correct a posted ledger group with a visible REVERSAL group, with a reason (audited)',
      group: 'operator',
      auth: 'admin',
      price: FREE,
      operation: {
        document: 'ledgerReverseGroup',
        operationName: 'LedgerReverseGroup',
        variables: (input) =>
          stringFields(input, [
            { name: 'groupId', required: true },
            { name: 'reason', required: true },
            { name: 'idempotencyKey', required: true },
          ]),
        respond: (data) => ({ status: 200, body: data.reverseLedgerGroup }),
      },
    },
    {
      method: 'GET',
      path: '/cafe/menu',
      purpose: 'demo café menu',
      group: 'cafe',
      auth: 'public',
      price: FREE,
      handler: (_input, service) => cafeMenu(LATTE_PRICE, service),
    },
    {
      method: 'POST',
      path: '/cafe/order/latte',
      purpose: 'demo café order; fulfilment is a voucher code, not a real coffee',
      group: 'cafe',
      auth: 'public',
      price: LATTE_PRICE,
      validate: validateLatteOrder,
      handler: (input, service) => orderLatte(input, LATTE_PRICE, service),
    },
    {
      method: 'GET',
      path: '/.well-known/x402',
      purpose:
        'x402 discovery: every paid resource with its method, price, network and payment requirements',
      group: 'service',
      auth: 'public',
      price: FREE,
      handler: (_input, service, routes) => ({ status: 200, body: x402Discovery(service, routes) }),
    },
    {
      method: 'GET',
      path: '/agent-registration.json',
      purpose: 'registration-v1 identity card for marketplace rendering',
      group: 'identity',
      auth: 'public',
      price: FREE,
      handler: (_input, service) => ({ status: 200, body: registrationCard(service) }),
    },
    {
      method: 'GET',
      path: '/.well-known/agent-registration.json',
      purpose: 'registration-v1 identity card at the well-known path (domain proof)',
      group: 'identity',
      auth: 'public',
      price: FREE,
      handler: (_input, service) => ({ status: 200, body: registrationCard(service) }),
    },
  ];
}
