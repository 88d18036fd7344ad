// Where a webhook endpoint may point, and the retry schedule's steps.
import { checkEndpointUrl, isDevelopmentPublicUrl, isInternalHost } from './endpointUrl';
import { DEFAULT_RETRY_SCHEDULE_MS, checkedRetrySchedule, retryWaitMs } from './types';

const PROD = { development: false };

test('outside development only https to a public host, without credentials, is an endpoint', () => {
  expect(checkEndpointUrl('https://hooks.example.com/spend', PROD)).toEqual({
    url: 'https://hooks.example.com/spend',
  });
  for (const url of [
    'http://hooks.example.com/x',
    'https://127.0.0.1/x',
    'https://2130706433/x',
    'https://10.1.2.3/x',
    'https://172.20.0.1/x',
    'https://192.168.1.1/x',
    'https://169.254.169.254/latest',
    'https://[::1]/x',
    'https://[fd00::1]/x',
    'https://[::ffff:127.0.0.1]/x',
    'https://localhost/x',
    'https://db.internal/x',
    'https://intranet/x',
    'https://u:p@hooks.example.com/x',
  ])
    expect(checkEndpointUrl(url, PROD)).toHaveProperty('problem');
});

test('development also allows http and loopback receivers', () => {
  expect(checkEndpointUrl('http://127.0.0.1:8080/h', { development: true })).toEqual({
    url: 'http://127.0.0.1:8080/h',
  });
  expect(checkEndpointUrl('ftp://127.0.0.1/h', { development: true })).toHaveProperty('problem');
  expect(isDevelopmentPublicUrl('http://127.0.0.1:4000')).toBe(true);
  expect(isDevelopmentPublicUrl('https://spend.example.com')).toBe(false);
  expect(isDevelopmentPublicUrl(null)).toBe(false);
});

test('public addresses are not internal', () => {
  expect(isInternalHost('93.184.216.34')).toBe(false);
  expect(isInternalHost('[2606:4700::1111]')).toBe(false);
  expect(isInternalHost('hooks.example.com')).toBe(false);
});

test('the schedule: 1 s, 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, then failed', () => {
  expect(
    DEFAULT_RETRY_SCHEDULE_MS.map((_, i) => retryWaitMs(DEFAULT_RETRY_SCHEDULE_MS, i + 1)),
  ).toEqual([1_000, 5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000]);
  expect(retryWaitMs(DEFAULT_RETRY_SCHEDULE_MS, 9)).toBeNull();
  expect(() => checkedRetrySchedule([])).toThrow(RangeError);
  expect(() => checkedRetrySchedule([0])).toThrow(RangeError);
  expect(checkedRetrySchedule([1, 2])).toEqual([1, 2]);
});
