// seo_tips: a deterministic launch checklist for a chosen name: a suggested title (≤ 60
// characters) and meta description (≤ 160), a page slug, keywords from the idea, the social
// handles to check (not checked here) and the launch steps. Lengths count Unicode code points.
import { handlesToCheck, type HandleChecklist } from './handles';
import { ideaWords } from './ideaWords';

export const TITLE_MAX_CHARS = 60;
export const META_DESCRIPTION_MAX_CHARS = 160;
export const SLUG_MAX_CHARS = 60;
export const MAX_KEYWORDS = 8;
const SLUG_IDEA_WORDS = 3;
const ELLIPSIS = '…';

export interface SuggestedText {
  readonly suggested: string;
  /** In Unicode code points. */
  readonly length: number;
  readonly maxLength: number;
}

export interface ChecklistItem {
  readonly id: string;
  readonly title: string;
  readonly detail: string;
}

export interface SeoTips {
  readonly name: string;
  readonly title: SuggestedText;
  readonly metaDescription: SuggestedText;
  readonly slug: string;
  readonly keywords: readonly string[];
  readonly handles: HandleChecklist;
  readonly checklist: readonly ChecklistItem[];
}

/** `name` must be a builder name and `idea` (when given) a validated idea. */
export function seoTips(name: string, idea?: string): SeoTips {
  const display = displayName(name);
  const summary = idea === undefined ? null : firstSentence(cleanText(idea));
  const title = fitted(
    summary === null ? `${display} — Official site` : `${display} — ${summary}`,
    TITLE_MAX_CHARS,
  );
  const description =
    summary === null
      ? `${display} is launching soon. Find out what ${display} offers and be among the first to try it.`
      : `${display}: ${cleanText(idea!)}`;
  const metaDescription = fitted(description, META_DESCRIPTION_MAX_CHARS);
  const keywords = [
    ...new Set([
      ...name.split('-').filter((part) => part.length > 0),
      ...(idea === undefined ? [] : ideaWords(idea)),
    ]),
  ].slice(0, MAX_KEYWORDS);
  const slug = slugFor(name, idea === undefined ? [] : ideaWords(idea));
  const handles = handlesToCheck(name);
  return {
    name,
    title,
    metaDescription,
    slug,
    keywords,
    handles,
    checklist: checklist(name, title, metaDescription, slug, keywords),
  };
}

/** "dog-walkr" → "Dog Walkr". */
export function displayName(name: string): string {
  return name
    .split('-')
    .filter((part) => part.length > 0)
    .map((part) => part[0].toUpperCase() + part.slice(1))
    .join(' ');
}

/** Control characters removed, whitespace runs made one space, trimmed. */
function cleanText(text: string): string {
  return text
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

function firstSentence(text: string): string {
  const end = /[.!?](\s|$)/.exec(text);
  const sentence = end === null ? text : text.slice(0, end.index);
  return sentence.length === 0 ? text : sentence[0].toUpperCase() + sentence.slice(1);
}

/** `text` cut to `max` code points at a word boundary where there is one, ending in "…" when cut. */
function fitted(text: string, max: number): SuggestedText {
  const points = [...text];
  if (points.length <= max) return { suggested: text, length: points.length, maxLength: max };
  const kept = points.slice(0, max - 1).join('');
  const space = kept.lastIndexOf(' ');
  const cut = (space > max / 2 ? kept.slice(0, space) : kept).replace(/[\s,;:—–-]+$/, '');
  const suggested = cut + ELLIPSIS;
  return { suggested, length: [...suggested].length, maxLength: max };
}

/** The name and the idea's first words, hyphen-joined, cut at a hyphen to SLUG_MAX_CHARS. */
function slugFor(name: string, words: readonly string[]): string {
  let slug = name.slice(0, SLUG_MAX_CHARS).replace(/-+$/, '');
  for (const word of words.slice(0, SLUG_IDEA_WORDS)) {
    if (slug.split('-').includes(word) || slug.length + 1 + word.length > SLUG_MAX_CHARS) continue;
    slug = `${slug}-${word}`;
  }
  return slug;
}

function checklist(
  name: string,
  title: SuggestedText,
  meta: SuggestedText,
  slug: string,
  keywords: readonly string[],
): ChecklistItem[] {
  return [
    {
      id: 'domain',
      title: 'Secure the domain',
      detail: `Check ${name} with POST /builder/check_domains, then register it with a registrar; this service neither buys nor reserves domains.`,
    },
    {
      id: 'handles',
      title: 'Claim the handles',
      detail:
        'Look up and claim the handle on each platform under handles; none of them was checked.',
    },
    {
      id: 'title',
      title: `Set the page title (at most ${title.maxLength} characters)`,
      detail: title.suggested,
    },
    {
      id: 'meta-description',
      title: `Write the meta description (at most ${meta.maxLength} characters)`,
      detail: meta.suggested,
    },
    { id: 'slug', title: 'Use a short, readable slug for the launch page', detail: `/${slug}` },
    {
      id: 'keywords',
      title: 'Use the keywords in the first heading and the first paragraph',
      detail: keywords.join(', '),
    },
    {
      id: 'social-cards',
      title: 'Add Open Graph and X card tags',
      detail: 'og:title, og:description and a 1200×630 og:image; twitter:card summary_large_image.',
    },
    {
      id: 'favicon',
      title: 'Add a favicon and an apple-touch-icon',
      detail: 'A 32×32 favicon and a 180×180 apple-touch-icon.',
    },
    {
      id: 'sitemap-robots',
      title: 'Publish a sitemap and robots.txt',
      detail:
        '/sitemap.xml listing the public pages and a /robots.txt that points to it without blocking them.',
    },
    {
      id: 'canonical-https',
      title: 'Serve one canonical host over HTTPS',
      detail:
        'Redirect http:// and the www or bare variant to the one canonical URL, and declare it with rel="canonical".',
    },
    {
      id: 'search-console',
      title: 'Verify the site with the search engines',
      detail:
        'Verify the domain in Google Search Console and Bing Webmaster Tools, then submit the sitemap.',
    },
  ];
}
