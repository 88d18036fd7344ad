// Spend policies: the consumer's view of its bound policy, and the operator's lifecycle (create,
// update to a new version, pause, resume, record the on-chain registration). The policy subgraph
// owns every rule; policyMapping.ts shapes its answers as the spec writes them.
import { consumerPolicyBody, operatorPolicyBody } from '../policyMapping';
import { bodyFields, queryValue } from '../requestBodies';
import { FREE, type RouteDefinition } from '../types';
import { POLICY_ID_FIELD } from './inputs';

export const consumerPolicyRoute: RouteDefinition = {
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
};

export const policyAdministrationRoutes: readonly RouteDefinition[] = [
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
      variables: (input) => bodyFields(input, [{ name: 'policy', kind: 'object', required: true }]),
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
];
