import { readFileSync } from 'node:fs';
import path from 'node:path';
import { AppError, ERROR_CODES, docsUrlFor, errorBody, isErrorCode } from './errors';

const docs = readFileSync(path.join(__dirname, '..', 'docs', 'errors.md'), 'utf8');
const headings = [...docs.matchAll(/^### ([A-Z][A-Z0-9_]*)$/gm)].map((match) => match[1]);

describe('error registry', () => {
  it('documents every code under its own heading in docs/errors.md, and nothing else', () => {
    expect([...headings].sort()).toEqual(Object.keys(ERROR_CODES).sort());
  });

  it('states each code’s status and retryability in the docs as the registry does', () => {
    for (const [code, spec] of Object.entries(ERROR_CODES)) {
      const section = docs.slice(docs.indexOf(`### ${code}\n`));
      expect(section).toMatch(
        new RegExp(
          `^### ${code}\\n\\nHTTP ${spec.status} · retryable: ${spec.retryable ? 'yes' : 'no'}`,
        ),
      );
    }
  });

  it('uses upper snake case codes and real HTTP error statuses', () => {
    for (const [code, spec] of Object.entries(ERROR_CODES)) {
      expect(code).toMatch(/^[A-Z][A-Z0-9_]*$/);
      expect(spec.status).toBeGreaterThanOrEqual(400);
      expect(spec.status).toBeLessThan(600);
    }
  });

  it('builds the REST error body with a docsUrl that points at the code’s anchor', () => {
    const body = errorBody('INTENT_MALFORMED', {
      docsBaseUrl: 'https://spend.example/docs/',
      details: [{ field: 'amount', reason: 'must be a positive integer string' }],
      correlationId: 'cor_0011223344556677',
    });
    expect(body).toEqual({
      code: 'INTENT_MALFORMED',
      message: ERROR_CODES.INTENT_MALFORMED.message,
      retryable: false,
      docsUrl: 'https://spend.example/docs/errors.md#intent_malformed',
      details: [{ field: 'amount', reason: 'must be a positive integer string' }],
      correlationId: 'cor_0011223344556677',
    });
    expect(docsUrlFor('ROUTE_NOT_FOUND', null)).toBeNull();
  });

  it('carries status and retryability on AppError', () => {
    const error = new AppError('PAYMENT_SETTLEMENT_PENDING');
    expect([error.status, error.retryable, error.message]).toEqual([
      503,
      true,
      ERROR_CODES.PAYMENT_SETTLEMENT_PENDING.message,
    ]);
    expect(isErrorCode('PAYMENT_SETTLEMENT_PENDING')).toBe(true);
    expect(isErrorCode('toString')).toBe(false);
  });
});
