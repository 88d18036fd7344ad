// @spend-control/agent: the typed agent SDK of the Agent Spend-Control Service (docs/agents.md).
// Fetch-based, no Node-only import: it runs in Node 20+ and in browsers.
export { SpendControlAgent, type SignInAccount, type SpendControlAgentOptions } from './agent';
export { SDK_ERROR_CODES, SpendControlError, type SdkErrorCode } from './errors';
export {
  buildSpendIntent,
  validatedIntent,
  type BuiltSpendIntent,
  type SpendIntentInput,
  type SpendIntentWire,
} from './intent';
export { MAX_PAYMENT_RESENDS, paidRequest, type Payer, type PaymentAsset } from './paidRequest';
export { checkReceipt, type ConsumerReceipt } from './receipt';
export type * from './types';
export {
  SPEND_INTENT_DOMAIN,
  SPEND_INTENT_PRIMARY_TYPE,
  SPEND_INTENT_TYPES,
} from '../../core/canon/intent-hash';
