// The builder inputs: every bad field is reported with its reason, all at once; good inputs come
// back with their defaults filled in.
import {
  validateRankOptionsInput,
  validateSeoTipsInput,
  validateSuggestNamesInput,
  builderInputError,
} from './validate';

describe('builder input validation', () => {
  it('suggest_names: fills count 10 and style brandable', () => {
    expect(validateSuggestNamesInput({ idea: 'dog walkers' })).toEqual({
      ok: true,
      value: { idea: 'dog walkers', count: 10, style: 'brandable' },
    });
    expect(validateSuggestNamesInput({ idea: 'x', count: 20, style: 'short' })).toEqual({
      ok: true,
      value: { idea: 'x', count: 20, style: 'short' },
    });
    expect(validateSuggestNamesInput({ idea: 'x', count: null, style: null })).toEqual({
      ok: true,
      value: { idea: 'x', count: 10, style: 'brandable' },
    });
  });

  it('suggest_names: lists every bad field', () => {
    expect(validateSuggestNamesInput({ count: 21, style: 'fancy', extra: 1 })).toEqual({
      ok: false,
      errors: [
        { field: 'extra', reason: 'is not a known field' },
        { field: 'idea', reason: 'required' },
        { field: 'count', reason: 'must be an integer in 1..20' },
        { field: 'style', reason: 'must be one of brandable, descriptive, short' },
      ],
    });
    expect(validateSuggestNamesInput([])).toEqual({
      ok: false,
      errors: [{ field: '(root)', reason: 'must be a JSON object' }],
    });
  });

  it('an idea is 1-500 characters (code points), not blank, without control characters but tab and line breaks', () => {
    const ideaErrors = (idea: unknown) => {
      const result = validateSuggestNamesInput({ idea });
      return result.ok ? [] : result.errors.map((error) => error.reason);
    };
    expect(ideaErrors('a'.repeat(500))).toEqual([]);
    expect(ideaErrors('😀'.repeat(500))).toEqual([]);
    expect(ideaErrors('line one\n\tline two\r\n')).toEqual([]);
    expect(ideaErrors('a'.repeat(501))).toEqual(['must be 1-500 characters, not only spaces']);
    expect(ideaErrors('')).toEqual(['must be 1-500 characters, not only spaces']);
    expect(ideaErrors(' \n ')).toEqual(['must be 1-500 characters, not only spaces']);
    expect(ideaErrors('bell\u0007')).toEqual([
      'must not contain control characters other than tab and line breaks',
    ]);
    expect(ideaErrors(5)).toEqual(['must be a string']);
  });

  it('rank_options: 1-50 distinct builder names, each bad one named by its index', () => {
    expect(validateRankOptionsInput({ names: ['nova', 'dog-walkr'] })).toEqual({
      ok: true,
      value: { names: ['nova', 'dog-walkr'] },
    });
    expect(
      validateRankOptionsInput({ names: ['nova', 'Nova', 'a'.repeat(64), 7, 'nova', '-x'] }),
    ).toEqual({
      ok: false,
      errors: [
        { field: 'names[1]', reason: expect.stringMatching(/^must be 1-63 of a-z/) },
        { field: 'names[2]', reason: expect.stringMatching(/^must be 1-63 of a-z/) },
        { field: 'names[3]', reason: expect.stringMatching(/^must be 1-63 of a-z/) },
        { field: 'names[4]', reason: 'repeats names[0]' },
        { field: 'names[5]', reason: expect.stringMatching(/^must be 1-63 of a-z/) },
      ],
    });
    const fifty = Array.from({ length: 50 }, (_value, index) => `name${index}`);
    expect(validateRankOptionsInput({ names: fifty }).ok).toBe(true);
    expect(validateRankOptionsInput({ names: [...fifty, 'name50'] })).toEqual({
      ok: false,
      errors: [{ field: 'names', reason: 'must hold 1-50 names' }],
    });
    expect(validateRankOptionsInput({ names: [] })).toEqual({
      ok: false,
      errors: [{ field: 'names', reason: 'must hold 1-50 names' }],
    });
    expect(validateRankOptionsInput({ names: 'nova' })).toEqual({
      ok: false,
      errors: [{ field: 'names', reason: 'must be an array of strings' }],
    });
    expect(validateRankOptionsInput({})).toEqual({
      ok: false,
      errors: [{ field: 'names', reason: 'required' }],
    });
  });

  it('seo_tips: a builder name and an optional idea', () => {
    expect(validateSeoTipsInput({ name: 'nova' })).toEqual({ ok: true, value: { name: 'nova' } });
    expect(validateSeoTipsInput({ name: 'nova', idea: 'stars' })).toEqual({
      ok: true,
      value: { name: 'nova', idea: 'stars' },
    });
    expect(validateSeoTipsInput({ name: 'No Va', idea: '', tlds: [] })).toEqual({
      ok: false,
      errors: [
        { field: 'tlds', reason: 'is not a known field' },
        { field: 'name', reason: expect.stringMatching(/^must be 1-63 of a-z/) },
        { field: 'idea', reason: 'must be 1-500 characters, not only spaces' },
      ],
    });
  });

  it('turns the list into REQUEST_INVALID (400) with the fields as details', () => {
    const error = builderInputError([{ field: 'idea', reason: 'required' }]);
    expect(error.code).toBe('REQUEST_INVALID');
    expect(error.status).toBe(400);
    expect(error.details).toEqual([{ field: 'idea', reason: 'required' }]);
  });
});
