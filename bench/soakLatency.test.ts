import { Latencies, LatencyTrend } from './soakLatency';

describe('the soak latencies', () => {
  it('gives count, p50 and p99 per key, keys in first-recorded order', () => {
    const latencies = new Latencies();
    for (let ms = 100; ms >= 1; ms -= 1) latencies.record('purchase', ms);
    latencies.record('free', 2.5);
    expect(latencies.summary()).toEqual([
      { key: 'purchase', count: 100, p50: 51, p99: 100 },
      { key: 'free', count: 1, p50: 2.5, p99: 2.5 },
    ]);
    expect(latencies.lines('op')).toEqual([
      '  op purchase: n 100, p50 51.0 ms, p99 100.0 ms',
      '  op free    : n 1, p50 2.5 ms, p99 2.5 ms',
    ]);
  });

  it('sorts numerically, not as text', () => {
    const latencies = new Latencies();
    for (const ms of [9, 80, 700]) latencies.record('paid', ms);
    expect(latencies.summary()[0]).toMatchObject({ p50: 80, p99: 700 });
  });

  it('prints each operation p50 minute by minute, - where a minute had none', () => {
    const trend = new LatencyTrend();
    const first = new Latencies();
    first.record('free', 3);
    const second = new Latencies();
    second.record('free', 4);
    second.record('purchase', 120);
    const third = new Latencies();
    third.record('purchase', 250);
    for (const minute of [first, second, third]) trend.addMinute(minute);
    expect(trend.lines()).toEqual([
      'soak p50 ms by minute (1…3):',
      '  free     3 4 -',
      '  purchase - 120 250',
    ]);
  });

  it('prints nothing for a run shorter than a minute', () => {
    expect(new LatencyTrend().lines()).toEqual([]);
  });
});
