// A /healthz probe that runs beside an attack: GET /healthz one after another until stopped,
// counting the answers and the failures (anything but a 200, or no answer). The tests assert that
// every probe answered; how fast they answer is measured by bench/abuse.ts, never asserted here.

export interface HealthProbe {
  /**
   * Stops probing once at least `minimumProbes` answers came (so some ran beside the attack);
   * how many probes ran and how many failed.
   */
  stop(minimumProbes?: number): Promise<{ probes: number; failures: number }>;
}

/** GET /healthz one after another, 10 ms apart, until stopped. */
export function probeHealth(url: string): HealthProbe {
  let stopped = false;
  let wanted = 1;
  let probes = 0;
  let failures = 0;
  const loop = (async () => {
    while (!stopped || probes < wanted) {
      try {
        const response = await fetch(`${url}/healthz`);
        await response.arrayBuffer();
        if (response.status !== 200) failures += 1;
      } catch {
        failures += 1;
      }
      probes += 1;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  return {
    async stop(minimumProbes = 1) {
      wanted = minimumProbes;
      stopped = true;
      await loop;
      return { probes, failures };
    },
  };
}
