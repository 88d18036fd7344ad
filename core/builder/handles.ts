// The social handles a launch should claim, one per platform, shaped to each platform's published
// handle rule (characters, length). Nothing here asks a platform whether a handle is free: these
// are items for a person to check, and every answer says so.

export const HANDLES_NOTE =
  'Not checked: this service asked no platform; look each handle up before you announce the name.';

interface HandleRule {
  readonly platform: string;
  readonly maxChars: number;
  /** What stands in for a hyphen the platform does not allow; null when hyphens are allowed. */
  readonly hyphenAs: string | null;
  readonly profileUrl: (handle: string) => string;
}

const HANDLE_RULES: readonly HandleRule[] = [
  { platform: 'x', maxChars: 15, hyphenAs: '_', profileUrl: (handle) => `https://x.com/${handle}` },
  {
    platform: 'instagram',
    maxChars: 30,
    hyphenAs: '_',
    profileUrl: (handle) => `https://www.instagram.com/${handle}/`,
  },
  {
    platform: 'tiktok',
    maxChars: 24,
    hyphenAs: '_',
    profileUrl: (handle) => `https://www.tiktok.com/@${handle}`,
  },
  {
    platform: 'youtube',
    maxChars: 30,
    hyphenAs: null,
    profileUrl: (handle) => `https://www.youtube.com/@${handle}`,
  },
  {
    platform: 'github',
    maxChars: 39,
    hyphenAs: null,
    profileUrl: (handle) => `https://github.com/${handle}`,
  },
  {
    platform: 'linkedin',
    maxChars: 100,
    hyphenAs: null,
    profileUrl: (handle) => `https://www.linkedin.com/company/${handle}/`,
  },
  {
    platform: 'bluesky',
    maxChars: 18,
    hyphenAs: null,
    profileUrl: (handle) => `https://bsky.app/profile/${handle}.bsky.social`,
  },
];

export interface HandleToCheck {
  readonly platform: string;
  readonly handle: string;
  readonly profileUrl: string;
  /** True when the platform's rule made the handle differ from the name (hyphens or length). */
  readonly adjusted: boolean;
}

export interface HandleChecklist {
  readonly checked: false;
  readonly note: string;
  readonly items: readonly HandleToCheck[];
}

/** `name` is a builder name (a DNS label), so only hyphens and length can need adjusting. */
export function handlesToCheck(name: string): HandleChecklist {
  const items = HANDLE_RULES.map((rule) => {
    // GitHub refuses consecutive hyphens; no platform here takes a trailing one after a cut.
    let handle =
      rule.hyphenAs === null ? name.replace(/-{2,}/g, '-') : name.replace(/-/g, rule.hyphenAs);
    handle = handle.slice(0, rule.maxChars).replace(/[-_]+$/, '');
    return {
      platform: rule.platform,
      handle,
      profileUrl: rule.profileUrl(handle),
      adjusted: handle !== name,
    };
  });
  return { checked: false, note: HANDLES_NOTE, items };
}
