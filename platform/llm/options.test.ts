// The client's options are checked once at start-up; a refusal names the field and never quotes
// the key.
import { checkLlmOptions, LlmConfigError, type LlmOptions } from './options';

const GOOD: LlmOptions = {
  apiKey: 'sk-abc-SECRET',
  baseUrl: 'https://api.example.com/v1/',
  model: 'gpt-4o-mini',
  timeoutMs: 8_000,
};

describe('LLM options', () => {
  it('accepts good options and trims the base URL’s trailing slash', () => {
    expect(checkLlmOptions(GOOD)).toEqual({ ...GOOD, baseUrl: 'https://api.example.com/v1' });
  });

  it.each<[string, Partial<LlmOptions>, keyof LlmOptions]>([
    ['an empty key', { apiKey: '' }, 'apiKey'],
    ['a key with a line break', { apiKey: 'sk-abc-SECRET\r\nX-Injected: 1' }, 'apiKey'],
    ['a key with a space', { apiKey: 'sk abc SECRET' }, 'apiKey'],
    ['a non-http base URL', { baseUrl: 'ftp://api.example.com' }, 'baseUrl'],
    [
      'a base URL with credentials',
      { baseUrl: 'https://user:sk-SECRET@api.example.com/v1' },
      'baseUrl',
    ],
    ['a base URL with a query', { baseUrl: 'https://api.example.com/v1?key=SECRET' }, 'baseUrl'],
    ['a relative base URL', { baseUrl: '/v1' }, 'baseUrl'],
    ['an empty model', { model: '' }, 'model'],
    ['a timeout below 100 ms', { timeoutMs: 99 }, 'timeoutMs'],
    ['a fractional timeout', { timeoutMs: 1000.5 }, 'timeoutMs'],
  ])('refuses %s, naming the field but not the value', (_what, change, field) => {
    let thrown: unknown;
    try {
      checkLlmOptions({ ...GOOD, ...change });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(LlmConfigError);
    expect((thrown as LlmConfigError).field).toBe(field);
    expect((thrown as Error).message).not.toContain('SECRET');
  });
});
