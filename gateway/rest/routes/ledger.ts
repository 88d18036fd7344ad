// The ledger's routes: a policy's spend window (owner, consumer or admin), and the two audited
// operator corrections, a treasury transfer between rails and the reversal of a posted group.
// Money moves only inside the ledger subgraph's SQL functions; these only name the request.
import { bodyFields, stringFields } from '../requestBodies';
import { FREE, type RouteDefinition } from '../types';
import { POLICY_ID_FIELD } from './inputs';

export const getLedgerRoute: RouteDefinition = {
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
};

export const treasuryTransferRoute: RouteDefinition = {
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
};

export const reverseGroupRoute: RouteDefinition = {
  method: 'POST',
  path: '/ledger/reverse_group',
  purpose: 'correct a posted ledger group with a visible REVERSAL group, with a reason (audited)',
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
};
