// validatePolicy: defaults, bounds, cross-field checks, unknown fields, and the normal form that
// gives every spelling of one policy one policyHash.
import fc from 'fast-check';
import { policyHash } from '../canon/policy-identity';
import { OWNER, policyDocument, TOKEN } from '../test-support/spend-fixtures';
import {
  DUPLICATE_KEYS,
  ESCALATION_CHANNELS,
  validatePolicy,
  type NormalisedPolicyRules,
} from './policy';

const MINIMAL = {
  owner: OWNER,
  asset: { network: 'eip155:196', token: TOKEN, symbol: 'USDT0', decimals: 6 },
  dailyBudget: '25',
  perCallCap: '2',
  escalateAbove: '1',
  categories: { allow: ['market-data'] },
};

function rules(document: unknown): NormalisedPolicyRules {
  const result = validatePolicy(document);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.rules;
}

function errors(document: unknown) {
  const result = validatePolicy(document);
  if (result.ok) throw new Error('expected the policy to be refused');
  return result.errors;
}

describe('validatePolicy', () => {
  it('normalises the DECISIONS example', () => {
    expect(rules(policyDocument())).toEqual({
      owner: OWNER,
      name: 'research agent',
      asset: { network: 'eip155:196', token: TOKEN, symbol: 'USDT0', decimals: 6 },
      dailyBudget: '25.00',
      perCallCap: '2.00',
      onPerCallCapExceeded: 'BLOCK',
      hardCap: '10.00',
      escalateAbove: '1.00',
      categories: { allow: ['market-data', 'research', 'security'], deny: [] },
      recipients: { allow: [], deny: [] },
      agents: { allow: [], deny: [] },
      vendorRisk: { minScore: 50, onBelow: 'ESCALATE', onUnavailable: 'ALLOW' },
      duplicates: { windowMinutes: 60, keys: ['amount', 'capability', 'itemHash', 'recipient'] },
      cooldowns: { sameServiceMinutes: 0 },
      rateLimit: { callsPerHour: 60 },
      escalation: { timeoutMinutes: 30, channels: ['webhook'] },
      maxDeadlineMinutes: 1440,
      expiresAt: '2027-12-31T00:00:00Z',
    });
  });

  it('fills every default of the DECISIONS example when only the required fields are given', () => {
    expect(rules(MINIMAL)).toEqual({
      owner: OWNER,
      name: '',
      asset: { network: 'eip155:196', token: TOKEN, symbol: 'USDT0', decimals: 6 },
      dailyBudget: '25.00',
      perCallCap: '2.00',
      onPerCallCapExceeded: 'BLOCK',
      hardCap: '2.00',
      escalateAbove: '1.00',
      categories: { allow: ['market-data'], deny: [] },
      recipients: { allow: [], deny: [] },
      agents: { allow: [], deny: [] },
      vendorRisk: { minScore: 50, onBelow: 'ESCALATE', onUnavailable: 'ALLOW' },
      duplicates: { windowMinutes: 60, keys: ['amount', 'capability', 'itemHash', 'recipient'] },
      cooldowns: { sameServiceMinutes: 0 },
      rateLimit: { callsPerHour: 60 },
      escalation: { timeoutMinutes: 30, channels: ['webhook'] },
      maxDeadlineMinutes: 1440,
      expiresAt: null,
    });
  });

  it('defaults hardCap to dailyBudget when over-cap spends escalate, so an approval can take effect', () => {
    expect(rules({ ...MINIMAL, onPerCallCapExceeded: 'ESCALATE' }).hardCap).toBe('25.00');
  });

  it.each(['owner', 'asset', 'dailyBudget', 'perCallCap', 'escalateAbove', 'categories'])(
    'requires %s',
    (field) => {
      const document: Record<string, unknown> = { ...MINIMAL };
      delete document[field];
      expect(errors(document)).toContainEqual({ field, reason: 'is required' });
    },
  );

  it('requires a non-empty categories.allow', () => {
    expect(errors({ ...MINIMAL, categories: { deny: ['x'] } })).toEqual([
      { field: 'categories.allow', reason: 'is required' },
    ]);
    expect(errors({ ...MINIMAL, categories: { allow: [] } })).toEqual([
      { field: 'categories.allow', reason: 'must list at least one category' },
    ]);
  });

  it('refuses unknown fields at every level, naming their path', () => {
    const document = {
      ...MINIMAL,
      perCallCapp: '1.00',
      asset: { ...MINIMAL.asset, chain: 'x' },
      categories: { allow: ['a'], block: [] },
      vendorRisk: { minScore: 10, floor: 1 },
      duplicates: { window: 5 },
      cooldowns: { minutes: 1 },
      rateLimit: { perHour: 1 },
      escalation: { timeout: 1 },
      recipients: { allowed: [] },
      agents: { denied: [] },
    };
    expect(
      errors(document)
        .map((e) => e.field)
        .sort(),
    ).toEqual(
      [
        'perCallCapp',
        'asset.chain',
        'categories.block',
        'vendorRisk.floor',
        'duplicates.window',
        'cooldowns.minutes',
        'rateLimit.perHour',
        'escalation.timeout',
        'recipients.allowed',
        'agents.denied',
      ].sort(),
    );
  });

  describe('amounts', () => {
    it('refuses more fractional digits than the asset has', () => {
      expect(errors({ ...MINIMAL, perCallCap: '2.0000001' })).toEqual([
        { field: 'perCallCap', reason: "has more fractional digits than the asset's 6 decimals" },
      ]);
      expect(rules({ ...MINIMAL, perCallCap: '2.000001' }).perCallCap).toBe('2.000001');
    });

    it.each([['2e0'], ['+2'], ['-2'], ['2,00'], ['2_0'], ['.'], ['']])('refuses %j', (text) => {
      expect(errors({ ...MINIMAL, perCallCap: text }).map((e) => e.field)).toEqual(['perCallCap']);
    });

    it('refuses JSON numbers: limits are written as decimal strings', () => {
      expect(errors({ ...MINIMAL, dailyBudget: 25 })).toEqual([
        { field: 'dailyBudget', reason: 'must be a decimal string like "25.00", not a number' },
      ]);
    });

    it('checks perCallCap ≤ dailyBudget at the exact boundary', () => {
      expect(rules({ ...MINIMAL, perCallCap: '25.00' }).perCallCap).toBe('25.00');
      expect(errors({ ...MINIMAL, perCallCap: '25.000001' })).toEqual([
        { field: 'perCallCap', reason: 'must not exceed dailyBudget' },
      ]);
    });

    it('checks escalateAbove ≤ hardCap, also against the defaulted hardCap', () => {
      expect(rules({ ...MINIMAL, hardCap: '1.00' }).escalateAbove).toBe('1.00');
      expect(errors({ ...MINIMAL, hardCap: '0.999999' })).toEqual([
        { field: 'escalateAbove', reason: 'must not exceed hardCap' },
      ]);
      expect(errors({ ...MINIMAL, escalateAbove: '2.01' })).toEqual([
        {
          field: 'escalateAbove',
          reason: 'must not exceed hardCap (hardCap defaults to perCallCap)',
        },
      ]);
    });

    it('treats hardCap: null as absent', () => {
      expect(rules({ ...MINIMAL, hardCap: null }).hardCap).toBe('2.00');
    });
  });

  describe('lists', () => {
    it('lowercases, deduplicates and sorts categories and addresses', () => {
      const upper = `0x${'AB'.repeat(20)}`;
      const result = rules({
        ...MINIMAL,
        categories: { allow: ['Security', 'market-data', 'MARKET-DATA'], deny: ['Z', 'a'] },
        recipients: { allow: [upper, upper.toLowerCase(), OWNER], deny: [] },
      });
      expect(result.categories).toEqual({ allow: ['market-data', 'security'], deny: ['a', 'z'] });
      expect(result.recipients.allow).toEqual([OWNER, upper.toLowerCase()]);
    });

    it('keeps agent ids case-sensitive', () => {
      expect(rules({ ...MINIMAL, agents: { allow: ['bot', 'Bot', 'bot'] } }).agents.allow).toEqual([
        'Bot',
        'bot',
      ]);
    });

    it('names the failing item by index', () => {
      expect(errors({ ...MINIMAL, categories: { allow: ['ok', 'not ok'] } })).toEqual([
        { field: 'categories.allow[1]', reason: 'must be 1–64 characters of a–z 0–9 . -' },
      ]);
      expect(errors({ ...MINIMAL, recipients: { deny: ['0x12'] } }).map((e) => e.field)).toEqual([
        'recipients.deny[0]',
      ]);
      expect(
        errors({ ...MINIMAL, agents: { allow: ['ok', 'no spaces'] } }).map((e) => e.field),
      ).toEqual(['agents.allow[1]']);
    });

    it('accepts only known duplicate keys and escalation channels, sorted', () => {
      expect(
        rules({ ...MINIMAL, duplicates: { keys: [...DUPLICATE_KEYS].reverse() } }).duplicates.keys,
      ).toEqual([...DUPLICATE_KEYS]);
      expect(
        rules({ ...MINIMAL, escalation: { channels: ['webhook', 'email', 'dashboard'] } })
          .escalation.channels,
      ).toEqual(['dashboard', 'email', 'webhook']);
      expect(
        errors({ ...MINIMAL, duplicates: { keys: ['amount', 'price'] } }).map((e) => e.field),
      ).toEqual(['duplicates.keys[1]']);
      expect(errors({ ...MINIMAL, duplicates: { keys: [] } }).map((e) => e.field)).toEqual([
        'duplicates.keys',
      ]);
      expect(errors({ ...MINIMAL, escalation: { channels: ['sms'] } }).map((e) => e.field)).toEqual(
        ['escalation.channels[0]'],
      );
      expect(errors({ ...MINIMAL, escalation: { channels: [] } }).map((e) => e.field)).toEqual([
        'escalation.channels',
      ]);
      expect(ESCALATION_CHANNELS).toEqual(['dashboard', 'email', 'slack', 'telegram', 'webhook']);
    });
  });

  describe('numbers and choices', () => {
    it.each([
      ['vendorRisk', 'minScore', 0, 100],
      ['duplicates', 'windowMinutes', 0, 10_080],
      ['cooldowns', 'sameServiceMinutes', 0, 10_080],
      ['rateLimit', 'callsPerHour', 1, 1_000_000],
      ['escalation', 'timeoutMinutes', 1, 1440],
    ])('%s.%s accepts %d–%d and nothing outside', (section, field, min, max) => {
      expect(validatePolicy({ ...MINIMAL, [section]: { [field]: min } }).ok).toBe(true);
      expect(validatePolicy({ ...MINIMAL, [section]: { [field]: max } }).ok).toBe(true);
      for (const bad of [min - 1, max + 1, min + 0.5, String(min)]) {
        expect(errors({ ...MINIMAL, [section]: { [field]: bad } })).toEqual([
          { field: `${section}.${field}`, reason: `must be an integer ${min}–${max}` },
        ]);
      }
    });

    it('budgetWindow is UTC_DAY or ROLLING_24H; only ROLLING_24H is written into the normal form', () => {
      expect(rules({ ...MINIMAL, budgetWindow: 'ROLLING_24H' }).budgetWindow).toBe('ROLLING_24H');
      expect(rules({ ...MINIMAL, budgetWindow: 'UTC_DAY' })).toEqual(rules(MINIMAL));
      expect('budgetWindow' in rules({ ...MINIMAL, budgetWindow: 'UTC_DAY' })).toBe(false);
      for (const wrong of ['utc_day', 'ROLLING_1H', '', null, 24, ['UTC_DAY']]) {
        expect(errors({ ...MINIMAL, budgetWindow: wrong })).toEqual([
          { field: 'budgetWindow', reason: 'must be one of UTC_DAY, ROLLING_24H' },
        ]);
      }
    });

    it('maxDeadlineMinutes accepts 1–43200', () => {
      expect(rules({ ...MINIMAL, maxDeadlineMinutes: 43_200 }).maxDeadlineMinutes).toBe(43_200);
      expect(errors({ ...MINIMAL, maxDeadlineMinutes: 0 }).map((e) => e.field)).toEqual([
        'maxDeadlineMinutes',
      ]);
      expect(errors({ ...MINIMAL, maxDeadlineMinutes: 43_201 }).map((e) => e.field)).toEqual([
        'maxDeadlineMinutes',
      ]);
    });

    it.each([
      ['onPerCallCapExceeded', 'ALLOW'],
      ['onPerCallCapExceeded', 'block'],
    ])('%s refuses %j', (field, value) => {
      expect(errors({ ...MINIMAL, [field]: value }).map((e) => e.field)).toEqual([field]);
    });

    it('vendorRisk.onBelow is BLOCK|ESCALATE and onUnavailable is ALLOW|BLOCK|ESCALATE', () => {
      expect(
        rules({ ...MINIMAL, vendorRisk: { onBelow: 'BLOCK', onUnavailable: 'ESCALATE' } })
          .vendorRisk,
      ).toEqual({
        minScore: 50,
        onBelow: 'BLOCK',
        onUnavailable: 'ESCALATE',
      });
      expect(errors({ ...MINIMAL, vendorRisk: { onBelow: 'ALLOW' } }).map((e) => e.field)).toEqual([
        'vendorRisk.onBelow',
      ]);
      expect(
        errors({ ...MINIMAL, vendorRisk: { onUnavailable: 'IGNORE' } }).map((e) => e.field),
      ).toEqual(['vendorRisk.onUnavailable']);
    });

    it('expiresAt: ISO-8601, stored as whole-second UTC', () => {
      expect(rules({ ...MINIMAL, expiresAt: '2027-12-31T02:00:00.000+02:00' }).expiresAt).toBe(
        '2027-12-31T00:00:00Z',
      );
      expect(errors({ ...MINIMAL, expiresAt: '31/12/2027' }).map((e) => e.field)).toEqual([
        'expiresAt',
      ]);
    });

    it('asset: network, token, symbol and decimals are all required and bounded', () => {
      expect(errors({ ...MINIMAL, asset: {} }).map((e) => e.field)).toEqual([
        'asset.network',
        'asset.token',
        'asset.symbol',
        'asset.decimals',
      ]);
      expect(
        errors({ ...MINIMAL, asset: { ...MINIMAL.asset, decimals: 37 } }).map((e) => e.field),
      ).toEqual(['asset.decimals']);
      expect(
        errors({ ...MINIMAL, asset: { ...MINIMAL.asset, symbol: 'US DT' } }).map((e) => e.field),
      ).toEqual(['asset.symbol']);
    });
  });
});

// ---- Two spellings of one policy must normalise identically (and so hash identically).

type Rng = () => number;
function rngFrom(seed: number): Rng {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)]!;
const shuffled = <T>(rng: Rng, items: readonly T[]): T[] => {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i -= 1) {
    const j = Math.floor(rng() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
};
function randomCase(rng: Rng, text: string): string {
  let out = '';
  let bits = 0;
  for (let i = 0; i < text.length; i += 1) {
    if (i % 30 === 0) bits = Math.floor(rng() * 2 ** 30);
    const c = text[i]!;
    out += (bits >> (i % 30)) & 1 ? c.toUpperCase() : c.toLowerCase();
  }
  return out;
}
const respellAddress = (rng: Rng, address: string): string =>
  `0x${randomCase(rng, address.slice(2))}`;

/** Any spelling of an atomic amount: optional trailing zeros, up to the asset's decimals. */
function spellAmount(rng: Rng, atomic: bigint, decimals: number): string {
  const digits = atomic.toString().padStart(decimals + 1, '0');
  const integer = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  const width = fraction.length + Math.floor(rng() * (decimals - fraction.length + 1));
  return width === 0 ? integer : `${integer}.${fraction.padEnd(width, '0')}`;
}

/** Lists with shuffled order, mixed case and repeated entries. */
function spellList(
  rng: Rng,
  items: readonly string[],
  respell: (item: string) => string,
): string[] {
  const withRepeats = items.flatMap((item) => (rng() < 0.3 ? [item, item] : [item]));
  return shuffled(rng, withRepeats).map(respell);
}

/** Leave out a value equal to its default, or spell it out; both must mean the same. */
function optional(
  rng: Rng,
  target: Record<string, unknown>,
  key: string,
  value: unknown,
  isDefault: boolean,
): void {
  if (isDefault && rng() < 0.5) return;
  target[key] = value;
}

function shuffleKeys(rng: Rng, value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => shuffleKeys(rng, v));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    shuffled(rng, Object.entries(value)).map(([k, v]) => [k, shuffleKeys(rng, v)]),
  );
}

interface PolicyParams {
  owner: string;
  decimals: number;
  dailyBudget: bigint;
  perCallCap: bigint;
  hardCap: bigint | null;
  escalateAbove: bigint;
  onPerCallCapExceeded: 'BLOCK' | 'ESCALATE';
  allow: string[];
  deny: string[];
  recipients: string[];
  agents: string[];
  minScore: number;
  windowMinutes: number;
  keys: string[];
  channels: string[];
  budgetWindow: 'UTC_DAY' | 'ROLLING_24H';
  expiresAtSeconds: number | null;
}

const address = fc
  .uint8Array({ minLength: 20, maxLength: 20 })
  .map((b) => `0x${Buffer.from(b).toString('hex')}`);
const chars = (alphabet: string) => fc.constantFrom(...alphabet);
const category = fc.string({
  unit: chars('abcdefghijklmnopqrstuvwxyz0123456789.-'),
  minLength: 1,
  maxLength: 12,
});
const agentId = fc.string({
  unit: chars('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-'),
  minLength: 1,
  maxLength: 10,
});
const policyParams: fc.Arbitrary<PolicyParams> = fc
  .record({
    owner: address,
    decimals: fc.integer({ min: 0, max: 18 }),
    budgetUnits: fc.bigInt({ min: 1n, max: 10n ** 12n }),
    capShare: fc.bigInt({ min: 0n, max: 1000n }),
    hardCapMode: fc.constantFrom('absent', 'equal', 'above'),
    escalateShare: fc.bigInt({ min: 0n, max: 1000n }),
    onPerCallCapExceeded: fc.constantFrom('BLOCK' as const, 'ESCALATE' as const),
    allow: fc.uniqueArray(category, { minLength: 1, maxLength: 5 }),
    deny: fc.uniqueArray(category, { maxLength: 3 }),
    recipients: fc.uniqueArray(address, { maxLength: 3 }),
    agents: fc.uniqueArray(agentId, { maxLength: 3 }),
    minScore: fc.integer({ min: 0, max: 100 }),
    windowMinutes: fc.integer({ min: 0, max: 10_080 }),
    keys: fc.uniqueArray(fc.constantFrom(...DUPLICATE_KEYS), { minLength: 1 }),
    channels: fc.uniqueArray(fc.constantFrom(...ESCALATION_CHANNELS), { minLength: 1 }),
    budgetWindow: fc.constantFrom('UTC_DAY' as const, 'ROLLING_24H' as const),
    expiresAtSeconds: fc.option(fc.integer({ min: 0, max: 253_402_300_799 - 86_400 })),
  })
  .map((p) => {
    const scale = 10n ** BigInt(p.decimals);
    const dailyBudget = p.budgetUnits * scale;
    const perCallCap = (dailyBudget * p.capShare) / 1000n;
    const hardCap =
      p.hardCapMode === 'absent' ? null : p.hardCapMode === 'equal' ? perCallCap : dailyBudget;
    const effectiveHardCap =
      hardCap ?? (p.onPerCallCapExceeded === 'ESCALATE' ? dailyBudget : perCallCap);
    const escalateAbove = (effectiveHardCap * p.escalateShare) / 1000n;
    return { ...p, dailyBudget, perCallCap, hardCap, escalateAbove };
  });

function spellPolicy(params: PolicyParams, seed: number): Record<string, unknown> {
  const rng = rngFrom(seed);
  const d = params.decimals;
  const doc: Record<string, unknown> = {
    owner: respellAddress(rng, params.owner),
    asset: {
      network: 'eip155:196',
      token: respellAddress(rng, TOKEN),
      symbol: 'USDT0',
      decimals: d,
    },
    dailyBudget: spellAmount(rng, params.dailyBudget, d),
    perCallCap: spellAmount(rng, params.perCallCap, d),
    escalateAbove: spellAmount(rng, params.escalateAbove, d),
    categories: { allow: spellList(rng, params.allow, (c) => randomCase(rng, c)) },
  };
  if (params.hardCap !== null) doc.hardCap = spellAmount(rng, params.hardCap, d);
  optional(
    rng,
    doc,
    'onPerCallCapExceeded',
    params.onPerCallCapExceeded,
    params.onPerCallCapExceeded === 'BLOCK',
  );
  optional(
    rng,
    doc.categories as Record<string, unknown>,
    'deny',
    spellList(rng, params.deny, (c) => randomCase(rng, c)),
    params.deny.length === 0,
  );
  optional(
    rng,
    doc,
    'recipients',
    { deny: spellList(rng, params.recipients, (a) => respellAddress(rng, a)) },
    params.recipients.length === 0,
  );
  optional(
    rng,
    doc,
    'agents',
    { allow: spellList(rng, params.agents, (a) => a) },
    params.agents.length === 0,
  );
  const vendorRisk: Record<string, unknown> = {};
  optional(rng, vendorRisk, 'minScore', params.minScore, params.minScore === 50);
  optional(rng, vendorRisk, 'onBelow', 'ESCALATE', true);
  optional(rng, doc, 'vendorRisk', vendorRisk, Object.keys(vendorRisk).length === 0);
  const duplicates: Record<string, unknown> = {};
  optional(rng, duplicates, 'windowMinutes', params.windowMinutes, params.windowMinutes === 60);
  const defaultKeys = ['amount', 'capability', 'itemHash', 'recipient'];
  const keysAreDefault = [...params.keys].sort().join() === defaultKeys.join();
  optional(
    rng,
    duplicates,
    'keys',
    spellList(rng, params.keys, (k) => k),
    keysAreDefault,
  );
  optional(rng, doc, 'duplicates', duplicates, Object.keys(duplicates).length === 0);
  optional(
    rng,
    doc,
    'escalation',
    { channels: spellList(rng, params.channels, (c) => c) },
    params.channels.join() === 'webhook',
  );
  optional(rng, doc, 'budgetWindow', params.budgetWindow, params.budgetWindow === 'UTC_DAY');
  optional(rng, doc, 'maxDeadlineMinutes', 1440, true);
  if (params.expiresAtSeconds === null) optional(rng, doc, 'expiresAt', null, true);
  else {
    const offsetHours = pick(rng, [0, 2, -5]);
    const local = new Date((params.expiresAtSeconds + offsetHours * 3600) * 1000)
      .toISOString()
      .slice(0, 19);
    const zone =
      offsetHours === 0
        ? pick(rng, ['Z', '.000Z', '+00:00'])
        : `${offsetHours > 0 ? '+' : '-'}0${Math.abs(offsetHours)}:00`;
    doc.expiresAt = local + zone;
  }
  return shuffleKeys(rng, doc) as Record<string, unknown>;
}

describe('policy normal form', () => {
  it('gives one policyHash for every spelling of one policy (key order, case, list order, defaults)', () => {
    fc.assert(
      fc.property(policyParams, fc.integer(), fc.integer(), (params, seedA, seedB) => {
        const a = validatePolicy(spellPolicy(params, seedA));
        const b = validatePolicy(spellPolicy(params, seedB));
        if (!a.ok || !b.ok) throw new Error(JSON.stringify([a, b]));
        const hashA = policyHash(a.rules);
        const hashB = policyHash(b.rules);
        // Only on a mismatch: a field-by-field diff says which normalisation went wrong.
        if (hashB !== hashA) expect(b.rules).toEqual(a.rules);
        expect(hashB).toBe(hashA);
      }),
      { numRuns: 10_000 },
    );
  });

  it('normal form is a fixed point: validating normalised rules changes nothing', () => {
    fc.assert(
      fc.property(policyParams, fc.integer(), (params, seed) => {
        const once = rules(spellPolicy(params, seed));
        expect(rules(once)).toEqual(once);
      }),
      { numRuns: 500 },
    );
  });

  it('policies written before budgetWindow existed keep their policyHash (the default UTC_DAY is not written out)', () => {
    // The hash of the DECISIONS example as every earlier version of the service computed it.
    const before = '0xa900c6f072564efd2ef81efd25c261a7a9a9ef0d119f2530219746217add2717';
    expect(policyHash(rules(policyDocument()))).toBe(before);
    expect(policyHash(rules(policyDocument({ budgetWindow: 'UTC_DAY' })))).toBe(before);
    expect(policyHash(rules(policyDocument({ budgetWindow: 'ROLLING_24H' })))).not.toBe(before);
  });

  it('a different limit gives a different policyHash', () => {
    const base = rules(policyDocument());
    for (const change of [
      { dailyBudget: '25.000001' },
      { perCallCap: '1.99' },
      { hardCap: '9.99' },
      { escalateAbove: '0.5' },
    ]) {
      expect(policyHash(rules(policyDocument(change)))).not.toBe(policyHash(base));
    }
  });
});
