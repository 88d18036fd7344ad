// The launch pack's variables: the model is used only with LLM_API_KEY, LLM_BASE_URL and LLM_MODEL
// together, each checked and named when wrong (never by the key's value), the key redacted from
// every rendering of the config; BUILDER_DEFAULT_TLDS is a short list of TLD labels.
import { inspect } from 'node:util';
import { ConfigError, loadConfig } from '.';

const KEY = 'sk-live-very-secret-key-123';
const LLM = { LLM_API_KEY: KEY, LLM_BASE_URL: 'https://llm.example/v1', LLM_MODEL: 'namer-1' };

function problems(env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
}

describe('builder configuration', () => {
  it('has no model and no default TLDs of its own when nothing is set', () => {
    expect(loadConfig({}).builder).toEqual({ llm: null, defaultTlds: null });
  });

  it('reads the model settings with the 8 s default timeout, the base URL without its trailing slash', () => {
    expect(loadConfig({ ...LLM, LLM_BASE_URL: 'https://llm.example/v1/' }).builder.llm).toEqual({
      apiKey: KEY,
      baseUrl: 'https://llm.example/v1',
      model: 'namer-1',
      timeoutMs: 8_000,
    });
    expect(loadConfig({ ...LLM, LLM_TIMEOUT_MS: '2500' }).builder.llm?.timeoutMs).toBe(2_500);
  });

  it('refuses a partial or malformed model setting, naming the variable and never the key', () => {
    const partial = problems({ LLM_API_KEY: KEY });
    expect(partial).toEqual([expect.stringMatching(/^LLM_API_KEY: .*set together/)]);
    const badUrl = problems({ ...LLM, LLM_BASE_URL: 'ftp://llm.example' });
    expect(badUrl).toEqual([expect.stringMatching(/^LLM_BASE_URL: must be an absolute http/)]);
    const badKey = problems({ ...LLM, LLM_API_KEY: 'has space-secret' });
    expect(badKey).toEqual([expect.stringMatching(/^LLM_API_KEY: /)]);
    expect(badKey.join(' ')).not.toContain('space-secret');
    expect(problems({ ...LLM, LLM_TIMEOUT_MS: '5' })).toEqual([
      expect.stringMatching(/^LLM_TIMEOUT_MS: /),
    ]);
  });

  it('never shows the key in JSON or inspect, while the code that needs it can read it', () => {
    const config = loadConfig(LLM);
    for (const rendering of [JSON.stringify(config), inspect(config, { depth: null })])
      expect(rendering).not.toContain(KEY);
    expect(JSON.parse(JSON.stringify(config)).builder.llm.apiKey).toBe('[redacted]');
    expect(config.builder.llm?.apiKey).toBe(KEY);
  });

  it('reads BUILDER_DEFAULT_TLDS as lowercase labels and refuses anything else', () => {
    expect(loadConfig({ BUILDER_DEFAULT_TLDS: 'COM, io,ai' }).builder.defaultTlds).toEqual([
      'com',
      'io',
      'ai',
    ]);
    for (const value of ['.com', 'com,com', 'a.b', '123', Array(12).fill('x').join(',')])
      expect(problems({ BUILDER_DEFAULT_TLDS: value })).toEqual([
        expect.stringMatching(/^BUILDER_DEFAULT_TLDS: /),
      ]);
  });
});
