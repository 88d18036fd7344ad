// The wire check: what JSON.parse accepts but the service cannot carry is named with its path.
import fc from 'fast-check';
import { canonicalJson } from '../canon/jcs';
import { MAX_WIRE_JSON_DEPTH, wireJsonProblem } from './wireJson';

function nested(levels: number): unknown {
  let value: unknown = 1;
  for (let level = 0; level < levels; level += 1) value = level % 2 === 0 ? { a: value } : [value];
  return value;
}

describe('wireJsonProblem', () => {
  it('accepts ordinary JSON, paired surrogates and the deepest allowed nesting', () => {
    expect(
      wireJsonProblem({
        policyId: '1',
        intent: { amount: '1.00', tags: ['a', 'b'], n: 1.5, ok: true, none: null },
      }),
    ).toBeNull();
    expect(wireJsonProblem({ emoji: '\ud83d\ude00', '\ud83d\ude00': 'key' })).toBeNull();
    expect(wireJsonProblem(nested(MAX_WIRE_JSON_DEPTH))).toBeNull();
    expect(wireJsonProblem(undefined)).toBeNull();
  });

  it.each([
    [{ metadata: { a: '\ud800' } }, 'metadata.a', /lone surrogate/],
    [{ list: ['ok', 'x\udc00'] }, 'list[1]', /lone surrogate/],
    [{ policy: { name: 'a\u0000b' } }, 'policy.name', /NUL/],
    [{ metadata: { ['k\u0000']: 1 } }, 'metadata', /key that contains a NUL/],
    [{ metadata: { ['\ud800']: 1 } }, 'metadata', /key that contains a lone surrogate/],
    [JSON.parse('{"metadata":{"a":1e400}}'), 'metadata.a', /finite/],
    [JSON.parse('[-1e400]'), '[0]', /finite/],
    ['\u0000', '(root)', /NUL/],
  ])('refuses %j at %s', (value, field, reason) => {
    const problem = wireJsonProblem(value);
    expect(problem?.field).toBe(field);
    expect(problem?.reason).toMatch(reason);
  });

  it('refuses nesting one level deeper than the limit, however deep, without recursion', () => {
    expect(wireJsonProblem(nested(MAX_WIRE_JSON_DEPTH + 1))?.reason).toMatch(
      /nests deeper than 32/,
    );
    const deep = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    expect(wireJsonProblem({ metadata: deep })?.reason).toMatch(/nests deeper/);
  });

  it('prefixes the source of a query or path value', () => {
    expect(wireJsonProblem({ policyId: 'x\u0000' }, 'query')).toEqual({
      field: 'query.policyId',
      reason: 'contains a NUL character',
    });
  });

  it('passes exactly the values the canonical form can carry, NUL aside', () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 6 }),
        fc.string({ unit: 'binary', maxLength: 4 }),
        (value, text) => {
          const sample = { value, text };
          const problem = wireJsonProblem(sample);
          let canonical = true;
          try {
            canonicalJson(sample);
          } catch {
            canonical = false;
          }
          if (JSON.stringify(sample).includes('\\u0000')) expect(problem).not.toBeNull();
          else expect(problem === null).toBe(canonical);
        },
      ),
    );
  });
});
