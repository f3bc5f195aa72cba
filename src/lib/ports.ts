import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';

/** Whether nothing listens on 127.0.0.1:`port`. */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** The lowest port this machine hands to outgoing connections (Linux's `ip_local_port_range`; elsewhere IANA's dynamic range). */
export function ephemeralStart(): number {
  try {
    const low = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    );
    if (Number.isInteger(low) && low > 1024) return low;
  } catch {
    // not Linux
  }
  return 49152;
}

const LOWEST = 10_000;

/**
 * A loopback port nothing listens on now, chosen below the range the OS takes ports from for
 * outgoing connections. What `listen(0)` gives comes from that range, and any connection this machine
 * opens between the check and the real listen can take it: for `platform dev`, which boots Postgres in
 * between, that window is seconds (a CI run lost `platform dev` to EADDRINUSE that way). Falls back to
 * the OS's choice when 50 random tries below the range find nothing free.
 */
export async function freePort(): Promise<number> {
  const top = ephemeralStart();
  for (let i = 0; i < 50 && top > LOWEST; i++) {
    const port = LOWEST + Math.floor(Math.random() * (top - LOWEST));
    if (await portIsFree(port)) return port;
  }
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
