// The loop every background worker runs: one round at a time in this process (a caller arriving
// mid-round runs the next one after it), a pause of `intervalMs` between rounds (0: no loop, rounds
// only through runOnce, as tests step them), and a stop that waits for the round in flight.
export interface RoundLoop<T> {
  runOnce(): Promise<T>;
  /** True once stop() was called. */
  readonly stopped: boolean;
  stop(): Promise<void>;
}

export function startRoundLoop<T>(
  round: () => Promise<T>,
  intervalMs: number,
  onRoundError: (error: unknown) => void,
): RoundLoop<T> {
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  let running: Promise<T> | null = null;
  const runOnce = async (): Promise<T> => {
    while (running !== null) await running.catch(() => undefined);
    running = round();
    try {
      return await running;
    } finally {
      running = null;
    }
  };
  const schedule = (): void => {
    if (stopped || intervalMs <= 0) return;
    timer = setTimeout(() => {
      runOnce().catch(onRoundError).finally(schedule);
    }, intervalMs);
  };
  schedule();
  return {
    runOnce,
    get stopped() {
      return stopped;
    },
    async stop() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      await running?.catch(() => undefined);
    },
  };
}
