// rank_options with check results: each result goes to the name that is its first label, and
// the ranking scores availability from them; a result for no ranked name, a repeat, a bad status
// or an unknown key is refused by its index.
import { rankOptions } from './rankOptions';
import { validateRankOptionsInput } from './validate';

describe('rank_options domains', () => {
  it('scores availability from the results and lists only AVAILABLE domains', () => {
    const result = validateRankOptionsInput({
      names: ['lumora', 'banana'],
      domains: [
        { domain: 'lumora.io', status: 'AVAILABLE' },
        { domain: 'lumora.com', status: 'TAKEN' },
        { domain: 'banana.io', status: 'TAKEN' },
      ],
    });
    if (!result.ok) throw new Error('expected a valid input');
    const ranked = rankOptions(result.value.names, result.value.availability);
    const byName = Object.fromEntries(ranked.map((option) => [option.name, option]));
    expect(byName.lumora.availableDomains).toEqual(['lumora.io']);
    expect(byName.lumora.parts.availability).toBe(14);
    expect(byName.banana.availableDomains).toEqual([]);
    expect(byName.banana.parts.availability).toBe(0);
  });

  it('a name without results counts as unknown (5 points)', () => {
    const result = validateRankOptionsInput({ names: ['lumora'], domains: [] });
    if (!result.ok) throw new Error('expected a valid input');
    expect(rankOptions(result.value.names, result.value.availability)[0].parts.availability).toBe(
      5,
    );
  });

  it('refuses each bad result by its index', () => {
    expect(
      validateRankOptionsInput({
        names: ['lumora'],
        domains: [
          { domain: 'other.io', status: 'AVAILABLE' },
          { domain: 'lumora.io', status: 'FREE' },
          { domain: 'Lumora.IO', status: 'TAKEN' },
          { domain: 'lumora.io', status: 'TAKEN', checkedAt: 'x' },
          { domain: 'lumora.ai', status: 'TAKEN' },
          { domain: 'lumora.ai', status: 'AVAILABLE' },
        ],
      }),
    ).toEqual({
      ok: false,
      errors: [
        { field: 'domains[0]', reason: 'belongs to none of names (its first label)' },
        { field: 'domains[1]', reason: expect.stringMatching(/^status must be one of/) },
        { field: 'domains[2]', reason: expect.stringMatching(/^domain must be a lowercase/) },
        { field: 'domains[3]', reason: 'must be {domain, status}' },
        { field: 'domains[5]', reason: 'repeats domains[4]' },
      ],
    });
    expect(validateRankOptionsInput({ names: ['a'], domains: 'a.io' })).toEqual({
      ok: false,
      errors: [{ field: 'domains', reason: expect.stringMatching(/^must be an array/) }],
    });
  });
});
