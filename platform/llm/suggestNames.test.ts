// suggest_names: the model's names when one is configured and answers validly (and its request
// carried the idea), the fallback generator's otherwise, and the answer says which and why.
import { fallbackNames } from '../../core/builder';
import { startDevnetLlm, standInNames, type DevnetLlm } from '../../devnet/llm';
import { createLlmClient, type LlmClient } from './client';
import { suggestNames } from './suggestNames';

const IDEA = 'Handmade ceramic mugs for coffee lovers';

describe('suggestNames', () => {
  let llm: DevnetLlm;
  let client: LlmClient;

  beforeAll(async () => {
    llm = await startDevnetLlm();
    client = createLlmClient({
      apiKey: llm.apiKey,
      baseUrl: llm.baseUrl,
      model: 'devnet-names',
      timeoutMs: 2_000,
    });
  });

  afterEach(() => llm.clearFaults());

  afterAll(async () => {
    await llm.stop();
  });

  it('answers from the model when it is configured and answers, and the model was asked about the idea', async () => {
    expect(await suggestNames(IDEA, { count: 6, style: 'brandable' }, client)).toEqual({
      source: 'model',
      model: 'devnet-names',
      names: standInNames(IDEA, 6),
    });
    const seen = await llm.waitForRequest((entry) => entry.idea === IDEA);
    expect(seen.authorization).toBe(`Bearer ${llm.apiKey}`);
  });

  it('answers from the fallback, saying so, when no model is configured', async () => {
    const before = llm.requests.length;
    expect(await suggestNames(IDEA, { count: 6, style: 'short', seed: 3 }, null)).toEqual({
      source: 'fallback',
      names: fallbackNames(IDEA, { count: 6, style: 'short', seed: 3 }),
      fallbackReason: 'NOT_CONFIGURED',
    });
    expect(llm.requests.length).toBe(before);
  });

  it.each([
    ['HTTP_500', 'HTTP_ERROR'],
    ['MALFORMED_JSON', 'MALFORMED_RESPONSE'],
    ['INVALID_NAMES', 'NO_VALID_NAMES'],
    ['RESET', 'NETWORK'],
  ] as const)(
    'answers from the fallback when the model fails (%s → %s)',
    async (answer, fallbackReason) => {
      llm.setFaults({ answer });
      expect(await suggestNames(IDEA, { count: 4, style: 'descriptive' }, client)).toEqual({
        source: 'fallback',
        names: fallbackNames(IDEA, { count: 4, style: 'descriptive' }),
        fallbackReason,
      });
    },
  );

  it('answers from the fallback when the model is down', async () => {
    const down = await startDevnetLlm();
    const orphan = createLlmClient({
      apiKey: down.apiKey,
      baseUrl: down.baseUrl,
      model: 'm',
      timeoutMs: 2_000,
    });
    await down.stop();
    expect(await suggestNames(IDEA, { count: 3, style: 'brandable' }, orphan)).toEqual({
      source: 'fallback',
      names: fallbackNames(IDEA, { count: 3, style: 'brandable' }),
      fallbackReason: 'NETWORK',
    });
  });

  it('answers from the fallback when the model is slower than the timeout', async () => {
    llm.setFaults({ delayMs: 5_000 });
    const impatient = createLlmClient({
      apiKey: llm.apiKey,
      baseUrl: llm.baseUrl,
      model: 'm',
      timeoutMs: 150,
    });
    expect(await suggestNames(IDEA, { count: 3, style: 'brandable' }, impatient)).toMatchObject({
      source: 'fallback',
      fallbackReason: 'TIMEOUT',
    });
  });
});
