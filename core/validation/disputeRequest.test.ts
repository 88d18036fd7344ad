// The body of POST /generate_dispute_packet: exactly one of {intentId} or {intentHash}, each in its
// shape, nothing else; every refusal a 400 REQUEST_INVALID naming the field.
import { AppError } from '../errors';
import { parseDisputePacketRequest } from './disputeRequest';

const INTENT_ID = `ci_${'0a'.repeat(12)}`;
const HASH = `0x${'Ab'.repeat(32)}`;

function refusal(raw: unknown): { code: string; fields: string[] } {
  try {
    parseDisputePacketRequest(raw);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    const details = (error.details ?? []) as { field: string }[];
    return { code: error.code, fields: details.map((detail) => detail.field) };
  }
  throw new Error(`accepted ${JSON.stringify(raw)}`);
}

test('an intent id or an intent hash (lowercased) is accepted', () => {
  expect(parseDisputePacketRequest({ intentId: INTENT_ID })).toEqual({
    kind: 'intentId',
    intentId: INTENT_ID,
  });
  expect(parseDisputePacketRequest({ intentHash: HASH })).toEqual({
    kind: 'intentHash',
    intentHash: HASH.toLowerCase(),
  });
});

test('neither, both, a bad shape or another key is 400 REQUEST_INVALID naming the field', () => {
  expect(refusal({})).toEqual({ code: 'REQUEST_INVALID', fields: ['intentId'] });
  expect(refusal({ intentId: INTENT_ID, intentHash: HASH })).toEqual({
    code: 'REQUEST_INVALID',
    fields: ['intentHash'],
  });
  expect(refusal({ intentId: 'ci_XYZ' })).toEqual({
    code: 'REQUEST_INVALID',
    fields: ['intentId'],
  });
  expect(refusal({ intentId: 7 })).toEqual({ code: 'REQUEST_INVALID', fields: ['intentId'] });
  expect(refusal({ intentHash: '0x12' })).toEqual({
    code: 'REQUEST_INVALID',
    fields: ['intentHash'],
  });
  expect(refusal({ intentId: INTENT_ID, note: 'x' })).toEqual({
    code: 'REQUEST_INVALID',
    fields: ['note'],
  });
  for (const raw of [null, [], 'ci_', 3]) expect(refusal(raw).code).toBe('REQUEST_INVALID');
});
