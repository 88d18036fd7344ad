// The LLM stand-in answers like an OpenAI-compatible chat-completions API: the bearer key checked,
// the request's shape checked and recorded, names built from the idea as JSON content, and each
// fault switch failing the way a real server can.
import { PROMPT_LINES } from '../../platform/llm/prompt';
import { standInNames } from './names';
import { startDevnetLlm, type DevnetLlm } from './server';

const KEY = 'sk-test-stand-in-0001';

function request(idea: string, count = 3): Record<string, unknown> {
  return {
    model: 'devnet-model',
    messages: [
      { role: 'system', content: 'names' },
      {
        role: 'user',
        content: `${PROMPT_LINES.idea}${idea}\n${PROMPT_LINES.count}${count}\n${PROMPT_LINES.style}short`,
      },
    ],
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'n', strict: true, schema: { type: 'object' } },
    },
  };
}

describe('LLM stand-in', () => {
  let llm: DevnetLlm;

  const post = async (
    body: unknown,
    options: { path?: string; key?: string | null } = {},
  ): Promise<{ status: number; text: string }> => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const key = options.key === undefined ? KEY : options.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    const response = await fetch(`${llm.url}${options.path ?? '/v1/chat/completions'}`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    });
    return { status: response.status, text: await response.text() };
  };

  beforeAll(async () => {
    llm = await startDevnetLlm({ apiKey: KEY, now: () => new Date('2026-01-02T03:04:05Z') });
  });

  afterEach(() => llm.clearFaults());

  afterAll(async () => {
    await llm.stop();
  });

  it('listens on 127.0.0.1 and gives /v1 as the base URL', () => {
    expect(new URL(llm.url).hostname).toBe('127.0.0.1');
    expect(llm.baseUrl).toBe(`${llm.url}/v1`);
  });

  it('answers a chat completion whose content is {names} built from the idea, on both paths', async () => {
    for (const path of ['/v1/chat/completions', '/chat/completions']) {
      const { status, text } = await post(request('coffee roaster subscriptions'), { path });
      expect(status).toBe(200);
      const body = JSON.parse(text);
      expect(body).toMatchObject({
        object: 'chat.completion',
        model: 'devnet-model',
        created: 1767323045,
        choices: [{ index: 0, finish_reason: 'stop' }],
      });
      expect(JSON.parse(body.choices[0].message.content)).toEqual({
        names: ['coffeeverse', 'roasterverse', 'subscriptionsverse'],
      });
    }
    expect(standInNames('coffee roaster subscriptions', 3)).toEqual([
      'coffeeverse',
      'roasterverse',
      'subscriptionsverse',
    ]);
  });

  it('records each request with its Authorization header, body and idea', async () => {
    await post(request('a bakery for dogs'));
    const seen = await llm.waitForRequest((entry) => entry.idea === 'a bakery for dogs');
    expect(seen).toMatchObject({
      path: '/v1/chat/completions',
      authorization: `Bearer ${KEY}`,
      body: request('a bakery for dogs'),
    });
  });

  it('refuses a missing or wrong key with 401, quoting the key presented as the real API does', async () => {
    expect((await post(request('x'), { key: null })).status).toBe(401);
    const wrong = await post(request('x'), { key: 'sk-wrong' });
    expect(wrong.status).toBe(401);
    expect(JSON.parse(wrong.text).error).toMatchObject({
      code: 'invalid_api_key',
      message: expect.stringContaining('sk-wrong'),
    });
  });

  it('refuses a request without a json_schema response format or a user message with 400', async () => {
    expect((await post({ ...request('x'), response_format: { type: 'text' } })).status).toBe(400);
    expect(
      (await post({ ...request('x'), messages: [{ role: 'system', content: 'x' }] })).status,
    ).toBe(400);
    expect((await post({ messages: [] })).status).toBe(400);
  });

  it('fails as switched: 500, malformed JSON, bad content, invalid names, refusal, oversized, reset', async () => {
    llm.setFaults({ answer: 'HTTP_500' });
    expect(await post(request('x'))).toMatchObject({
      status: 500,
      text: expect.stringContaining(KEY),
    });
    llm.setFaults({ answer: 'MALFORMED_JSON' });
    const malformed = await post(request('x'));
    expect(malformed.status).toBe(200);
    expect(() => JSON.parse(malformed.text)).toThrow(SyntaxError);
    const content = async (): Promise<string> =>
      JSON.parse((await post(request('x'))).text).choices[0].message.content;
    llm.setFaults({ answer: 'MALFORMED_CONTENT' });
    const prose = await content();
    expect(() => JSON.parse(prose)).toThrow(SyntaxError);
    llm.setFaults({ answer: 'INVALID_NAMES' });
    expect(JSON.parse(await content()).names).toContain('Not A Label');
    llm.setFaults({ answer: 'REFUSAL' });
    expect(JSON.parse((await post(request('x'))).text).choices[0].message).toMatchObject({
      content: null,
      refusal: expect.any(String),
    });
    llm.setFaults({ answer: 'OVERSIZED' });
    expect((await post(request('x'))).text.length).toBeGreaterThan(256 * 1024);
    llm.setFaults({ answer: 'RESET' });
    await expect(post(request('x'))).rejects.toThrow('fetch failed');
  });

  it('holds its answer back when switched to slow, so a caller with a shorter timeout gives up', async () => {
    llm.setFaults({ delayMs: 5_000 });
    const call = fetch(`${llm.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify(request('slow idea')),
      signal: AbortSignal.timeout(200),
    });
    await expect(call).rejects.toMatchObject({ name: 'TimeoutError' });
    llm.setFaults({ delayMs: 50 });
    expect((await post(request('slow idea'))).status).toBe(200);
  });

  it('refuses fault switches outside their bounds', () => {
    expect(() => llm.setFaults({ delayMs: -1 })).toThrow(RangeError);
    expect(() => llm.setFaults({ answer: 'LOUD' as never })).toThrow(RangeError);
  });

  it('refuses connections once stopped', async () => {
    const other = await startDevnetLlm();
    await other.stop();
    await expect(
      fetch(`${other.baseUrl}/chat/completions`, { method: 'POST' }),
    ).rejects.toMatchObject({ cause: { code: 'ECONNREFUSED' } });
  });
});
