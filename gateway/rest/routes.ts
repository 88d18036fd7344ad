// The REST route table: every path the service serves, exactly as the spec writes it, in the order
// /catalog and /openapi.json list them (both are generated from this table). Each route is written
// once, with its price, who may call it and the operation behind it, in routes/<concept>.ts.
import { builderRoutes } from './routes/builder';
import { cafeRoutes } from './routes/cafe';
import { consumerCatalogRoute } from './routes/catalog';
import { consumerIntentRoutes } from './routes/consumer';
import { consumerReceiptRoute } from './routes/consumerReceipt';
import { executeConsumerIntentRoute, resolveConsumerIntentRoute } from './routes/consumerExecution';
import { verifyDeliveryRoute } from './routes/delivery';
import { generateDisputePacketRoute } from './routes/disputes';
import { escalationStatusRoute } from './routes/escalations';
import {
  createSpendIntentRoute,
  detectDuplicateRoute,
  preflightPaymentRoute,
} from './routes/intents';
import { getLedgerRoute, reverseGroupRoute, treasuryTransferRoute } from './routes/ledger';
import { fundConsumerIntentRoute } from './routes/consumerFunding';
import { consumerPolicyRoute, policyAdministrationRoutes } from './routes/policies';
import { redactPaymentMetadataRoute } from './routes/privacy';
import { ledgerCsvRoute, reconcileAgentSpendRoute } from './routes/reports';
import { logReceiptRoute, receiptStatusRoute } from './routes/receipts';
import {
  pingServiceRoute,
  registrationCardRoutes,
  serviceMapRoute,
  x402DiscoveryRoute,
} from './routes/service';
import { consumerSignInRoute, ownerSignInRoute, signInNonceRoute } from './routes/signIn';
import { scoreBuyerRoute, scoreVendorRoute } from './routes/trust';
import { policyWhatIfRoute } from './routes/whatIf';
import type { RouteDefinition } from './types';

export function buildRoutes(): RouteDefinition[] {
  return [
    pingServiceRoute,
    serviceMapRoute,
    consumerCatalogRoute,
    consumerReceiptRoute,
    consumerPolicyRoute,
    ...consumerIntentRoutes,
    fundConsumerIntentRoute,
    signInNonceRoute,
    consumerSignInRoute,
    ownerSignInRoute,
    createSpendIntentRoute,
    preflightPaymentRoute,
    detectDuplicateRoute,
    verifyDeliveryRoute,
    generateDisputePacketRoute,
    scoreVendorRoute,
    scoreBuyerRoute,
    getLedgerRoute,
    reconcileAgentSpendRoute,
    policyWhatIfRoute,
    ledgerCsvRoute,
    receiptStatusRoute,
    escalationStatusRoute,
    logReceiptRoute,
    redactPaymentMetadataRoute,
    ...policyAdministrationRoutes,
    treasuryTransferRoute,
    reverseGroupRoute,
    executeConsumerIntentRoute,
    resolveConsumerIntentRoute,
    ...cafeRoutes,
    ...builderRoutes,
    x402DiscoveryRoute,
    ...registrationCardRoutes,
  ];
}
