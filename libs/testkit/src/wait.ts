import { readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A TCP port free on loopback right now (the OS picks it; another process may take it later). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Whether `port` can be listened on, on loopback, right now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** The lowest port of the kernel's ephemeral range (what port 0 and outgoing connections use). */
function ephemeralLow(): number {
  try {
    const low = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0],
    );
    return Number.isInteger(low) && low > 11_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/**
 * A loopback port nothing listens on now, below the kernel's ephemeral range: for a server that
 * must come back on the same port after an outage a test causes (a private NATS), or an address
 * that must stay dead (a target that refuses). Apps started on port 0 and outgoing connections
 * only get ports inside that range, so none of them can take this one; two callers drawing the
 * same port is the clash left (about 1 in 20,000).
 */
export async function quietPort(): Promise<number> {
  const low = 10_000;
  const high = ephemeralLow() - 1;
  for (let tries = 0; tries < 100; tries++) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free loopback port between ${low} and ${high}`);
}

/** Whether something on loopback accepts TCP connections on `port` right now. */
export function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Polls `probe` every `everyMs` until it returns something other than undefined or false, and
 * returns that; a probe that throws counts as not yet. Fails after `timeoutMs`, naming `what` and
 * the probe's last error.
 */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  timeoutMs = 10000,
  everyMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    await sleep(everyMs);
  }
  const why = last instanceof Error ? `: ${last.message}` : '';
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}`);
}
