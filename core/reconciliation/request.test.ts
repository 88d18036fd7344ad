import { AppError } from '../errors';
import { MAX_PERIOD_DAYS, parseReconcileRequest } from './request';

function fieldsOf(raw: unknown): string[] {
  try {
    parseReconcileRequest(raw);
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('REQUEST_INVALID');
    return ((error as AppError).details as Array<{ field: string }>).map((d) => d.field);
  }
  throw new Error('the request was accepted');
}

const valid = { policyId: '42', from: '2026-11-01T00:00:00Z', to: '2026-11-24T00:00:00Z' };

test('a valid body parses to bounds as instants, agentId optional', () => {
  expect(parseReconcileRequest(valid)).toEqual({
    policyId: '42',
    from: new Date('2026-11-01T00:00:00Z'),
    to: new Date('2026-11-24T00:00:00Z'),
    agentId: null,
  });
  expect(parseReconcileRequest({ ...valid, agentId: 'bot-1' }).agentId).toBe('bot-1');
});

test('from at or after to is refused on `to`', () => {
  expect(fieldsOf({ ...valid, to: valid.from })).toEqual(['to']);
  expect(fieldsOf({ ...valid, from: valid.to, to: valid.from })).toEqual(['to']);
});

test(`exactly ${MAX_PERIOD_DAYS} days is accepted, one second more is refused`, () => {
  const to = new Date(Date.parse(valid.from) + MAX_PERIOD_DAYS * 86_400_000);
  const text = to.toISOString().replace('.000Z', 'Z');
  expect(parseReconcileRequest({ ...valid, to: text }).to).toEqual(to);
  const over = new Date(to.getTime() + 1000).toISOString().replace('.000Z', 'Z');
  expect(fieldsOf({ ...valid, to: over })).toEqual(['to']);
});

test('every bad field is listed at once', () => {
  expect(
    fieldsOf({ policyId: 'x', from: '2026-02-30T00:00:00Z', to: 'soon', agentId: '', extra: 1 }),
  ).toEqual(['extra', 'policyId', 'from', 'to', 'agentId']);
  expect(fieldsOf({})).toEqual(['policyId', 'from', 'to']);
});

test('a body that is not an object is refused', () => {
  expect(() => parseReconcileRequest([])).toThrow(AppError);
  expect(() => parseReconcileRequest(null)).toThrow(AppError);
});
