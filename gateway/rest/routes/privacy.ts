// POST /redact_payment_metadata: strips personal data and secrets from payment metadata and
// hashes the result, in the gateway (core/privacy/redact.ts), storing nothing.
import { redactPaymentMetadata } from '../../../core/privacy/redact';
import { bodyFields } from '../requestBodies';
import { type RouteDefinition, usdt0 } from '../types';

export const redactPaymentMetadataRoute: RouteDefinition = {
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
    const { metadata } = bodyFields(input, [{ name: 'metadata', kind: 'object', required: true }]);
    return { status: 200, body: redactPaymentMetadata(metadata) };
  },
};
