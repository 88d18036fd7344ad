// A /healthz prober on a thread of its own, for the abuse benchmark: while an attack runs on the
// main thread (where the server under test runs too), it asks GET /healthz one request after
// another, PROBE_GAP_MS apart, and times each answer. Being off the main thread, its clock is not
// held up by the attack's client work; what it measures is how long the server took to answer.
import { Worker } from 'node:worker_threads';

/** The pause between two probes: a monitor's steady poll, not a load of its own. */
export const PROBE_GAP_MS = 5;

export interface ProbeReport {
  /** Each answer's latency in ms, in the order sent. */
  readonly latenciesMs: number[];
  /** Probes answered with anything but a 200, or not at all. */
  readonly failures: number;
}

// Plain JavaScript: a worker thread loads it through Node itself.
const PROBER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { performance } = require('node:perf_hooks');
const { url, gapMs } = workerData;
let running = false;
let loop = Promise.resolve();
let report = { latenciesMs: [], failures: 0 };
async function probe() {
  while (running) {
    const started = performance.now();
    try {
      const response = await fetch(url + '/healthz');
      await response.arrayBuffer();
      if (response.status !== 200) report.failures += 1;
    } catch {
      report.failures += 1;
    }
    report.latenciesMs.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, gapMs));
  }
}
parentPort.on('message', async (command) => {
  if (command === 'start') {
    report = { latenciesMs: [], failures: 0 };
    running = true;
    loop = probe();
    parentPort.postMessage('started');
  } else if (command === 'stop') {
    running = false;
    await loop;
    parentPort.postMessage(report);
  } else {
    parentPort.close();
  }
});
`;

export interface HealthProber {
  /** Probes /healthz beside `attack` (from its start to its end) and reports every answer. */
  beside(attack: () => Promise<void>): Promise<ProbeReport>;
  close(): Promise<void>;
}

export function startHealthProber(url: string): HealthProber {
  const worker = new Worker(PROBER_SOURCE, {
    eval: true,
    workerData: { url, gapMs: PROBE_GAP_MS },
  });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  const ask = <T>(command: string): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const onError = (error: Error) => reject(error);
      worker.once('error', onError);
      worker.once('message', (answer: T) => {
        worker.off('error', onError);
        resolve(answer);
      });
      worker.postMessage(command);
    });
  return {
    async beside(attack) {
      await ask<string>('start');
      let failed: unknown = null;
      try {
        await attack();
      } catch (error) {
        failed = error;
      }
      const report = await ask<ProbeReport>('stop');
      if (failed !== null) throw failed;
      return report;
    },
    async close() {
      worker.postMessage('close');
      await exited;
    },
  };
}
