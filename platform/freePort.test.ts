// The free port of a process started to bind it later: bindable, and below the range the system
// draws `listen(0)` from.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { freePort } from './freePort';

test('a free port lies below the ephemeral range, and can be bound', async () => {
  const low = Number(
    readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0],
  );
  for (let i = 0; i < 5; i += 1) {
    const port = await freePort();
    expect(port).toBeGreaterThanOrEqual(1_024);
    expect(port).toBeLessThan(low);
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    await new Promise((resolve) => server.close(resolve));
  }
});
