// seo_tips: the same name and idea give the same checklist; the suggested texts keep their length
// limits for any input; handles are items to check and the answer says they were not checked.
import fc from 'fast-check';
import { isBuilderName } from './names';
import { META_DESCRIPTION_MAX_CHARS, seoTips, SLUG_MAX_CHARS, TITLE_MAX_CHARS } from './seoTips';

const IDEA =
  'An app that helps dog owners find trusted walkers nearby. We vet every walker and insure every walk.';
const nameArb = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/).filter(isBuilderName);
const ideaArb = fc.oneof(
  fc.string({ minLength: 1, maxLength: 500 }),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 200 }),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 300 }),
);
const codePoints = (text: string): number => [...text].length;

describe('seoTips', () => {
  it('suggests a title and meta description from the name and the idea, within their limits', () => {
    const tips = seoTips('dog-walkr', IDEA);
    expect(tips.title).toEqual({
      suggested: 'Dog Walkr — An app that helps dog owners find trusted…',
      length: 54,
      maxLength: TITLE_MAX_CHARS,
    });
    expect(tips.metaDescription).toEqual({
      suggested:
        'Dog Walkr: An app that helps dog owners find trusted walkers nearby. We vet every walker and insure every walk.',
      length: 111,
      maxLength: META_DESCRIPTION_MAX_CHARS,
    });
    expect(tips.slug).toBe('dog-walkr-owners-find');
    expect(tips.keywords).toEqual([
      'dog',
      'walkr',
      'owners',
      'find',
      'trusted',
      'walkers',
      'nearby',
      'vet',
    ]);
  });

  it('lists handles to check per platform, shaped to each platform, and says they were not checked', () => {
    const { handles } = seoTips('dog-walkr');
    expect(handles.checked).toBe(false);
    expect(handles.note).toMatch(/^Not checked/);
    expect(handles.items.map((item) => item.platform)).toEqual([
      'x',
      'instagram',
      'tiktok',
      'youtube',
      'github',
      'linkedin',
      'bluesky',
    ]);
    expect(handles.items.find((item) => item.platform === 'x')).toEqual({
      platform: 'x',
      handle: 'dog_walkr',
      profileUrl: 'https://x.com/dog_walkr',
      adjusted: true,
    });
    expect(handles.items.find((item) => item.platform === 'github')).toMatchObject({
      handle: 'dog-walkr',
      adjusted: false,
    });
    const long = seoTips('a-very-long-brand-name-for-x').handles.items.find(
      (item) => item.platform === 'x',
    );
    expect(long).toMatchObject({ handle: 'a_very_long_bra', adjusted: true });
  });

  it('answers without an idea, and its checklist says the domain is neither bought nor reserved', () => {
    const tips = seoTips('brightly');
    expect(tips.title.suggested).toBe('Brightly — Official site');
    expect(tips.keywords).toEqual(['brightly']);
    expect(tips.slug).toBe('brightly');
    expect(tips.checklist.map((item) => item.id)).toEqual([
      'domain',
      'handles',
      'title',
      'meta-description',
      'slug',
      'keywords',
      'social-cards',
      'favicon',
      'sitemap-robots',
      'canonical-https',
      'search-console',
    ]);
    expect(tips.checklist[0].detail).toMatch(/neither buys nor reserves/);
  });

  it('is deterministic and keeps every limit for any name and idea', () => {
    fc.assert(
      fc.property(nameArb, fc.option(ideaArb, { nil: undefined }), (name, idea) => {
        const tips = seoTips(name, idea);
        expect(seoTips(name, idea)).toEqual(tips);
        expect(codePoints(tips.title.suggested)).toBe(tips.title.length);
        expect(tips.title.length).toBeLessThanOrEqual(TITLE_MAX_CHARS);
        expect(codePoints(tips.metaDescription.suggested)).toBe(tips.metaDescription.length);
        expect(tips.metaDescription.length).toBeLessThanOrEqual(META_DESCRIPTION_MAX_CHARS);
        expect(tips.slug.length).toBeLessThanOrEqual(SLUG_MAX_CHARS);
        expect(tips.slug).toMatch(/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/);
        expect(tips.title.suggested + tips.metaDescription.suggested).not.toMatch(
          /[\u0000-\u001f\u007f-\u009f]/,
        );
        for (const item of tips.handles.items) expect(item.handle).toMatch(/^[a-z0-9][a-z0-9_-]*$/);
      }),
      { numRuns: 300 },
    );
  });
});
