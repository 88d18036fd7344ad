import { AppError } from '../errors';
import { parseVerifyDeliveryRequest } from './deliveryRequest';

const INTENT = 'ci_0123456789abcdef01234567';

function problems(body: unknown): unknown {
  try {
    parseVerifyDeliveryRequest(body);
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('REQUEST_INVALID');
    return (error as AppError).details ?? null;
  }
  throw new Error(`accepted ${JSON.stringify(body)}`);
}

describe('parseVerifyDeliveryRequest', () => {
  it('reads {intentId}', () => {
    expect(parseVerifyDeliveryRequest({ intentId: INTENT })).toEqual({
      kind: 'intent',
      intentId: INTENT,
    });
  });

  it('reads a domains.check claim, names lowercased, extra attestation keys kept', () => {
    expect(
      parseVerifyDeliveryRequest({
        capability: 'domains.check',
        params: { domain: 'Taken.TEST' },
        providerAttested: {
          status: 'ATTESTED',
          fields: { domain: 'TAKEN.test', available: false, checkedAt: '2026-01-01T00:00:00Z' },
        },
      }),
    ).toEqual({
      kind: 'claim',
      capability: 'domains.check',
      params: { domain: 'taken.test' },
      providerAttested: {
        status: 'ATTESTED',
        fields: { domain: 'taken.test', available: false, checkedAt: '2026-01-01T00:00:00Z' },
      },
    });
  });

  it('reads any other capability with object params and attestation', () => {
    expect(
      parseVerifyDeliveryRequest({
        capability: 'travel.book',
        params: { from: 'AMS' },
        providerAttested: { booked: true },
      }),
    ).toMatchObject({ kind: 'claim', capability: 'travel.book' });
  });

  it('refuses malformed bodies with one {field, reason} each', () => {
    expect(problems([])).toBeNull();
    expect(problems({ intentId: 'ci_x' })).toEqual([
      { field: 'intentId', reason: 'must be a consumer intent id (ci_ + 24 hex)' },
    ]);
    expect(problems({ intentId: INTENT, capability: 'domains.check' })).toEqual([
      { field: 'capability', reason: 'is not a known field' },
    ]);
    expect(problems({})).toEqual([
      { field: 'capability', reason: 'is required' },
      { field: 'params', reason: 'is required' },
      { field: 'providerAttested', reason: 'is required' },
    ]);
    expect(
      problems({
        capability: 'domains.check',
        params: { domain: 'nope', extra: 1 },
        providerAttested: { fields: { domain: 'taken.test', available: false } },
      }),
    ).toEqual([
      { field: 'params.extra', reason: 'is not a known field' },
      { field: 'params.domain', reason: 'must be a domain name such as example.test' },
    ]);
    expect(
      problems({
        capability: 'domains.check',
        params: { domain: 'taken.test' },
        providerAttested: { fields: { domain: 'taken.test' } },
      }),
    ).toEqual([{ field: 'providerAttested.fields.available', reason: 'is required' }]);
    expect(
      problems({
        capability: 'domains.check',
        params: { domain: 'taken.test' },
        providerAttested: {},
      }),
    ).toEqual([{ field: 'providerAttested.fields', reason: 'is required' }]);
  });
});
