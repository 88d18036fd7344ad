// check_domains' input reader: `{domains}` normalised to distinct A-labels, `{names, tlds?}` made
// into names × TLDs (the deployment's defaults when none are named), at most 50 domains, and
// every problem listed by field at once.
import { validateCheckDomainsInput } from './request';

const DEFAULTS = ['test', 'example'];

describe('validateCheckDomainsInput', () => {
  it('makes names × TLDs, in order, remembering the name of each', () => {
    expect(validateCheckDomainsInput({ names: ['a', 'b'], tlds: ['io'] }, DEFAULTS)).toEqual({
      ok: true,
      value: {
        domains: [
          { domain: 'a.io', name: 'a' },
          { domain: 'b.io', name: 'b' },
        ],
      },
    });
    const byDefault = validateCheckDomainsInput({ names: ['a'] }, DEFAULTS);
    expect(byDefault.ok && byDefault.value.domains.map((entry) => entry.domain)).toEqual([
      'a.test',
      'a.example',
    ]);
  });

  it('normalises given domains to lowercase A-labels and refuses repeats after normalising', () => {
    const result = validateCheckDomainsInput(
      { domains: ['München.Test.', 'xn--mnchen-3ya.test', 'ok.test'] },
      DEFAULTS,
    );
    expect(result).toEqual({
      ok: false,
      errors: [{ field: 'domains[1]', reason: 'repeats domains[0]' }],
    });
  });

  it('allows exactly 50 domains and refuses 51, whichever way they are given', () => {
    const names = (count: number) => Array.from({ length: count }, (_, index) => `n${index}`);
    expect(validateCheckDomainsInput({ names: names(25) }, DEFAULTS).ok).toBe(true);
    expect(validateCheckDomainsInput({ names: names(26) }, DEFAULTS)).toEqual({
      ok: false,
      errors: [{ field: 'names', reason: expect.stringMatching(/make 52 domains; at most 50/) }],
    });
    expect(validateCheckDomainsInput({ names: names(51), tlds: ['io'] }, DEFAULTS).ok).toBe(false);
    const domains = names(51).map((name) => `${name}.io`);
    expect(validateCheckDomainsInput({ domains: domains.slice(0, 50) }, DEFAULTS).ok).toBe(true);
    expect(validateCheckDomainsInput({ domains }, DEFAULTS)).toEqual({
      ok: false,
      errors: [{ field: 'domains', reason: 'must hold 1-50 domains' }],
    });
  });

  it('without the defaults (the gateway) counts one domain per name and leaves the product to the subgraph', () => {
    const names = Array.from({ length: 50 }, (_, index) => `n${index}`);
    expect(validateCheckDomainsInput({ names }, null).ok).toBe(true);
  });

  it('lists every problem at once', () => {
    const result = validateCheckDomainsInput(
      { names: ['ok', 'Not Ok', 'ok'], tlds: ['com', '42', 'com'], other: true },
      DEFAULTS,
    );
    expect(result.ok === false && result.errors.map((error) => error.field)).toEqual([
      'other',
      'names[1]',
      'names[2]',
      'tlds[1]',
      'tlds[2]',
    ]);
    expect(validateCheckDomainsInput(null, DEFAULTS)).toEqual({
      ok: false,
      errors: [{ field: '(root)', reason: 'must be a JSON object' }],
    });
  });
});
