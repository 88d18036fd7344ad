// A free port for a process that binds it later (the demo's service, the process tests' children),
// taken below the system's ephemeral range so that nothing opening a socket on port 0 meanwhile
// can draw it.
import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';

/** Whether `port` can be bound on 127.0.0.1 right now. */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** The first port of the system's ephemeral range (where `listen(0)` and outgoing sockets draw). */
function ephemeralLow(): number {
  try {
    const low = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0],
    );
    return Number.isInteger(low) && low > 2_048 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/**
 * A free port for a process that binds it later (a test's child, the demo's service), below the
 * system's ephemeral range. A port found by `listen(0)` came from that range, and between its release and the
 * process's bind, any socket the process (or a test beside it) opens on port 0 first, such as the
 * anvil chains and peers the service starts before its gateway, can draw it again (CI once failed
 * on exactly that: EADDRINUSE). Below the range only another explicit choice can take it; on a
 * system without /proc the range is taken to start at 32768 (Linux's default; macOS's is higher).
 */
export async function freePort(): Promise<number> {
  const high = ephemeralLow();
  const low = Math.max(1_024, high - 12_000);
  for (let tries = 0; tries < 50; tries += 1) {
    const port = low + randomInt(high - low);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port found in ${low}..${high - 1}`);
}
