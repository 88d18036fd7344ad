// rank_options: a heuristic score 0-100 per name with its parts (length, charset,
// pronounceability and, when domain results are given, availability), in integer arithmetic, and
// the names sorted by it. Deterministic; ties break on the shorter name, then code-unit order.
import { isBuilderName } from './names';
import { PRONOUNCEABILITY_MAX_POINTS, pronounceabilityPoints } from './pronounceability';

export const DOMAIN_AVAILABILITY = ['AVAILABLE', 'TAKEN', 'UNKNOWN'] as const;
export type DomainAvailability = (typeof DOMAIN_AVAILABILITY)[number];

export const RANK_POINTS = {
  length: 30,
  charset: 20,
  pronounceability: PRONOUNCEABILITY_MAX_POINTS,
  availability: 20,
} as const;
const IDEAL_LENGTH = { min: 5, max: 8 } as const;
const SHORT_PENALTY_PER_CHAR = 6;
const LONG_PENALTY_PER_CHAR = 3;
const CHARSET_POINTS = { lettersOnly: 20, digits: 12, hyphens: 6, digitsAndHyphens: 0 } as const;
const AVAILABILITY_POINTS = {
  firstAvailable: 14,
  perExtraAvailable: 2,
  extraAvailableCounted: 3,
  unknown: 5,
  allTaken: 0,
} as const;

/** One domain's result from check_domains. */
export interface DomainStatus {
  readonly domain: string;
  readonly status: DomainAvailability;
}

/** The check results per name; a name missing from the map counts as UNKNOWN. */
export type AvailabilityByName = ReadonlyMap<string, readonly DomainStatus[]>;

export interface ScoreParts {
  readonly length: number;
  readonly charset: number;
  readonly pronounceability: number;
  /** null when the ranking was given no domain results. */
  readonly availability: number | null;
}

export interface RankedOption {
  /** 1 for the best. */
  readonly rank: number;
  readonly name: string;
  /** 0-100. */
  readonly score: number;
  readonly parts: ScoreParts;
  /** The domains the check found AVAILABLE, sorted; null when no domain results were given. */
  readonly availableDomains: readonly string[] | null;
}

/** 30 for 5-8 characters, 6 fewer per character below 5, 3 fewer per character above 8, at least 0. */
export function lengthPoints(name: string): number {
  if (name.length < IDEAL_LENGTH.min)
    return Math.max(
      0,
      RANK_POINTS.length - SHORT_PENALTY_PER_CHAR * (IDEAL_LENGTH.min - name.length),
    );
  if (name.length > IDEAL_LENGTH.max)
    return Math.max(
      0,
      RANK_POINTS.length - LONG_PENALTY_PER_CHAR * (name.length - IDEAL_LENGTH.max),
    );
  return RANK_POINTS.length;
}

/** Letters only 20 > with digits 12 > with hyphens 6 > with both 0. */
export function charsetPoints(name: string): number {
  const digits = /[0-9]/.test(name);
  const hyphens = name.includes('-');
  if (digits && hyphens) return CHARSET_POINTS.digitsAndHyphens;
  if (hyphens) return CHARSET_POINTS.hyphens;
  if (digits) return CHARSET_POINTS.digits;
  return CHARSET_POINTS.lettersOnly;
}

/** a AVAILABLE domains: 14 + 2 × min(a - 1, 3); none available but one unknown (or none checked): 5; all TAKEN: 0. */
export function availabilityPoints(statuses: readonly DomainStatus[]): number {
  const available = new Set(
    statuses.filter((entry) => entry.status === 'AVAILABLE').map((entry) => entry.domain),
  ).size;
  if (available > 0) {
    return (
      AVAILABILITY_POINTS.firstAvailable +
      AVAILABILITY_POINTS.perExtraAvailable *
        Math.min(available - 1, AVAILABILITY_POINTS.extraAvailableCounted)
    );
  }
  const allTaken = statuses.length > 0 && statuses.every((entry) => entry.status === 'TAKEN');
  return allTaken ? AVAILABILITY_POINTS.allTaken : AVAILABILITY_POINTS.unknown;
}

/**
 * The score: with domain results, the sum of the four parts (30 + 20 + 30 + 20 = 100); without,
 * the first three scaled to 100 as floor(sum × 100 / 80).
 */
export function scoreOf(parts: ScoreParts): number {
  const sum = parts.length + parts.charset + parts.pronounceability;
  if (parts.availability !== null) return sum + parts.availability;
  return Math.floor(
    (sum * 100) / (RANK_POINTS.length + RANK_POINTS.charset + RANK_POINTS.pronounceability),
  );
}

/** Score desc, then length asc, then code-unit order asc: a total order on distinct names. */
export function compareRanked(
  a: Omit<RankedOption, 'rank'>,
  b: Omit<RankedOption, 'rank'>,
): number {
  if (a.score !== b.score) return b.score - a.score;
  if (a.name.length !== b.name.length) return a.name.length - b.name.length;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Every name scored and sorted; throws RangeError on an invalid or repeated name (validate first). */
export function rankOptions(
  names: readonly string[],
  availability?: AvailabilityByName,
): RankedOption[] {
  const seen = new Set<string>();
  for (const name of names) {
    if (!isBuilderName(name))
      throw new RangeError('every name must be a builder name (a lowercase DNS label)');
    if (seen.has(name)) throw new RangeError('names must be distinct');
    seen.add(name);
  }
  return names
    .map((name) => scored(name, availability))
    .sort(compareRanked)
    .map((option, index) => ({ rank: index + 1, ...option }));
}

function scored(
  name: string,
  availability: AvailabilityByName | undefined,
): Omit<RankedOption, 'rank'> {
  const statuses = availability?.get(name) ?? [];
  const parts: ScoreParts = {
    length: lengthPoints(name),
    charset: charsetPoints(name),
    pronounceability: pronounceabilityPoints(name),
    availability: availability === undefined ? null : availabilityPoints(statuses),
  };
  const availableDomains =
    availability === undefined
      ? null
      : [
          ...new Set(
            statuses.filter((entry) => entry.status === 'AVAILABLE').map((entry) => entry.domain),
          ),
        ].sort();
  return { name, score: scoreOf(parts), parts, availableDomains };
}
