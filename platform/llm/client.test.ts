// The chat-completions client against the devnet stand-in over real HTTP: the request it sends
// (model, idea, json_schema, bearer key), the strict reading of the answer, and one named failure
// (never a throw, never the key) for every way the server can fail.
import { inspect } from 'node:util';
import {
  startDevnetLlm,
  standInNames,
  type DevnetLlm,
  type LlmFaultAnswer,
} from '../../devnet/llm';
import { isBuilderName } from '../../core/builder';
import { createLlmClient, type LlmClient } from './client';
import { NAMES_SCHEMA_NAME, PROMPT_LINES } from './prompt';
import type { LlmNamesResult } from './answer';

const KEY = 'sk-live-0123456789abcdefSECRET';
const IDEA = 'A bakery\nthat delivers\tdog treats';

describe('LLM client', () => {
  let llm: DevnetLlm;
  let client: LlmClient;

  beforeAll(async () => {
    llm = await startDevnetLlm({ apiKey: KEY });
    client = createLlmClient({
      apiKey: KEY,
      baseUrl: llm.baseUrl,
      model: 'devnet-names',
      timeoutMs: 2_000,
    });
  });

  afterEach(() => llm.clearFaults());

  afterAll(async () => {
    await llm.stop();
  });

  it('asks POST {base}/chat/completions with the model, the idea on one line, a json_schema for {names} and the bearer key', async () => {
    const result = await client.suggestNames({ idea: IDEA, count: 4, style: 'short' });
    expect(result).toEqual({
      ok: true,
      model: 'devnet-names',
      names: standInNames('A bakery that delivers dog treats', 4),
    });
    const seen = await llm.waitForRequest(
      (entry) => entry.idea === 'A bakery that delivers dog treats',
    );
    expect(seen.path).toBe('/v1/chat/completions');
    expect(seen.authorization).toBe(`Bearer ${KEY}`);
    expect(seen.body).toMatchObject({
      model: 'devnet-names',
      messages: [
        { role: 'system', content: expect.stringContaining('exactly 4 distinct names') },
        {
          role: 'user',
          content: expect.stringContaining(
            `${PROMPT_LINES.idea}A bakery that delivers dog treats\n${PROMPT_LINES.count}4\n`,
          ),
        },
      ],
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: NAMES_SCHEMA_NAME,
          strict: true,
          schema: {
            type: 'object',
            properties: { names: { type: 'array', items: { type: 'string' } } },
            required: ['names'],
            additionalProperties: false,
          },
        },
      },
    });
  });

  it('keeps only valid names from the answer: lowercased, deduplicated, capped at count', async () => {
    llm.setFaults({ answer: 'MIXED_NAMES' });
    const result = await client.suggestNames({
      idea: 'coffee roaster',
      count: 5,
      style: 'brandable',
    });
    expect(result).toEqual({
      ok: true,
      model: 'devnet-names',
      names: standInNames('coffee roaster', 5),
    });
    if (result.ok) expect(result.names.every(isBuilderName)).toBe(true);
  });

  const failures: [
    string,
    Partial<{ answer: LlmFaultAnswer; delayMs: number }>,
    Omit<Extract<LlmNamesResult, { ok: false }>, 'ok'>,
  ][] = [
    ['a 500', { answer: 'HTTP_500' }, { reason: 'HTTP_ERROR', detail: 'HTTP 500' }],
    [
      'a body that is not JSON',
      { answer: 'MALFORMED_JSON' },
      { reason: 'MALFORMED_RESPONSE', detail: 'the answer is not a JSON object' },
    ],
    [
      'content that is not {names}',
      { answer: 'MALFORMED_CONTENT' },
      {
        reason: 'MALFORMED_RESPONSE',
        detail: 'the message is not JSON of the form {"names": [...]}',
      },
    ],
    [
      'only invalid names',
      { answer: 'INVALID_NAMES' },
      { reason: 'NO_VALID_NAMES', detail: 'no name in the answer is a valid DNS label' },
    ],
    [
      'a refusal',
      { answer: 'REFUSAL' },
      { reason: 'REFUSED', detail: 'the model refused the request' },
    ],
    [
      'an answer past the size bound',
      { answer: 'OVERSIZED' },
      { reason: 'RESPONSE_TOO_LARGE', detail: 'the answer is larger than 65536 bytes' },
    ],
    [
      'a cut connection',
      { answer: 'RESET' },
      { reason: 'NETWORK', detail: expect.stringMatching(/^[A-Z0-9_]+$|^network error$/) },
    ],
  ];

  it.each(failures)('answers %s as a named failure', async (_what, faults, failure) => {
    llm.setFaults(faults);
    expect(await client.suggestNames({ idea: 'tea', count: 3, style: 'brandable' })).toEqual({
      ok: false,
      ...failure,
    });
  });

  it('gives up on a slow model at its timeout', async () => {
    llm.setFaults({ delayMs: 5_000 });
    const impatient = createLlmClient({
      apiKey: KEY,
      baseUrl: llm.baseUrl,
      model: 'devnet-names',
      timeoutMs: 200,
    });
    expect(await impatient.suggestNames({ idea: 'tea', count: 3, style: 'brandable' })).toEqual({
      ok: false,
      reason: 'TIMEOUT',
      detail: 'no complete answer within 200 ms',
    });
  });

  it('names a refused key without quoting what the server echoed', async () => {
    const wrongKey = 'sk-wrong-key-SECRET2';
    const wrong = createLlmClient({
      apiKey: wrongKey,
      baseUrl: llm.baseUrl,
      model: 'devnet-names',
      timeoutMs: 2_000,
    });
    const result = await wrong.suggestNames({ idea: 'tea', count: 3, style: 'brandable' });
    expect(result).toEqual({
      ok: false,
      reason: 'AUTH_REJECTED',
      detail: 'HTTP 401: the key was refused',
    });
    expect(JSON.stringify(result)).not.toContain(wrongKey);
  });

  it('answers NETWORK when nothing listens', async () => {
    const gone = await startDevnetLlm({ apiKey: KEY });
    await gone.stop();
    const orphan = createLlmClient({
      apiKey: KEY,
      baseUrl: gone.baseUrl,
      model: 'm',
      timeoutMs: 2_000,
    });
    expect(await orphan.suggestNames({ idea: 'tea', count: 3, style: 'brandable' })).toEqual({
      ok: false,
      reason: 'NETWORK',
      detail: 'ECONNREFUSED',
    });
  });

  it('never shows the key: not in any result, nor when the client is printed or serialised', async () => {
    const results: unknown[] = [];
    for (const answer of [
      'NORMAL',
      'HTTP_500',
      'MALFORMED_JSON',
      'INVALID_NAMES',
      'OVERSIZED',
      'RESET',
    ] as const) {
      llm.setFaults({ answer });
      results.push(await client.suggestNames({ idea: 'tea', count: 3, style: 'brandable' }));
    }
    const printed = [
      JSON.stringify(results),
      inspect(results, { depth: null }),
      inspect(client, { depth: null, showHidden: true }),
      JSON.stringify(client),
    ].join('\n');
    expect(printed).not.toContain('SECRET');
    expect(printed).toContain('HTTP 500');
  });
});
