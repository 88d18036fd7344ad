// The decision thread's side (see decisionThread.ts): its own pool, the same preflight code the
// server runs in-thread (preflightPaymentHere of dispatch.ts: validation, lookup, the batch queue),
// one answer per request. On `stop` it answers what it holds, ends its pool and lets the thread exit.
import { parentPort, workerData } from 'node:worker_threads';
import { systemClock } from '../../../platform/clock';
import { createPool } from '../../../platform/db/pool';
import {
  coalescing,
  toWireError,
  type PreflightArguments,
  type ThreadAnswer,
  type ThreadAnswers,
  type ThreadMessage,
} from './threadWire';
import { preflightPaymentHere } from './dispatch';

const port = parentPort;
if (port === null) throw new Error('decisionWorker runs only as a worker thread');
const options = workerData as {
  connectionString: string;
  poolSize: number;
  applicationName: string;
};
const pool = createPool(options.connectionString, {
  max: options.poolSize,
  applicationName: options.applicationName,
});
const sealingKeys = new Map<string, Buffer>();
const held = new Set<Promise<void>>();

const post = coalescing<ThreadAnswer>((answers) => {
  try {
    port.postMessage({ answers } satisfies ThreadAnswers);
  } catch {
    // An answer that cannot be cloned must still answer its request: one by one, so only it fails.
    for (const answer of answers) {
      try {
        port.postMessage({ answers: [answer] } satisfies ThreadAnswers);
      } catch (error) {
        port.postMessage({
          answers: [{ id: answer.id, ok: false, error: toWireError(error) }],
        } satisfies ThreadAnswers);
      }
    }
  }
});

port.on('message', (message: ThreadMessage) => {
  if ('stop' in message) {
    void Promise.allSettled([...held]).then(async () => {
      await new Promise((resolve) => setImmediate(resolve)); // the last answers go out first
      await pool.end();
      port.close();
    });
    return;
  }
  for (const { id, preflight } of message.preflights) {
    let sealingKey: Buffer | undefined;
    if (preflight.sealingKeyHex !== null) {
      sealingKey = sealingKeys.get(preflight.sealingKeyHex);
      if (sealingKey === undefined) {
        sealingKey = Buffer.from(preflight.sealingKeyHex, 'hex');
        sealingKeys.set(preflight.sealingKeyHex, sealingKey);
      }
    }
    const handedOver = new Date(preflight.nowMs);
    const clock = preflight.systemClock ? systemClock : () => handedOver;
    const args = JSON.parse(preflight.argumentsJson) as PreflightArguments;
    const answered: Promise<void> = preflightPaymentHere(
      { db: pool, now: clock, sealingKey },
      args.policyId,
      args.intent,
      args.intentHash,
    )
      .then(
        (value) => {
          let valueJson: string;
          try {
            valueJson = JSON.stringify(value);
          } catch (error) {
            post({ id, ok: false, error: toWireError(error) });
            return;
          }
          post({ id, ok: true, valueJson });
        },
        (error: unknown) => post({ id, ok: false, error: toWireError(error) }),
      )
      .finally(() => held.delete(answered));
    held.add(answered);
  }
});
