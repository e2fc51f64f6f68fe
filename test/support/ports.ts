/** Loopback ports for the test servers: a free one, and whether one answers. */
import { readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';

/**
 * A port of 127.0.0.1 free right now (bound to port 0, then released).
 * Another process may take it before the caller binds it: callers retry.
 */
export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A port of 127.0.0.1 for a server whose port is written into other servers'
 * configuration (a Sentinel set, a Cluster), so it cannot simply be retried:
 * picked below the kernel's ephemeral range, where no outgoing connection of
 * another test can take it between this check and the bind, and free together
 * with `port + 10000` (a Cluster node's bus port, which must stay below 65536
 * and outside that range too). Server ports lie below 20000 and bus ports
 * from 20000, so one's bus port is never another's port; and each vitest
 * worker (`VITEST_POOL_ID`) picks in a slice of its own, so two workers
 * starting clusters at once never pick the same pair (with four workers,
 * one did: "Address already in use").
 */
export async function findFreeServerPort(): Promise<number> {
  const { low, high } = serverPortSlice();
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (handedOut.has(port) || handedOut.has(port + BUS_OFFSET)) continue;
    if ((await canBind(port)) && (await canBind(port + BUS_OFFSET))) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port pair in ${low}–${high} for a test server`);
}

const LOW_PORT = 10_000;
const BUS_OFFSET = 10_000;
/** Slices of the server ports, one a vitest worker (more workers share them, round robin). */
const SLICES = 8;
const handedOut = new Set<number>();

function serverPortSlice(): { low: number; high: number } {
  const top = Math.min(LOW_PORT + BUS_OFFSET, ephemeralLow() - BUS_OFFSET - 1);
  const width = Math.floor((top - LOW_PORT) / SLICES);
  const pool = Number(process.env.VITEST_POOL_ID ?? '1');
  const slice = Number.isInteger(pool) && pool > 0 ? (pool - 1) % SLICES : 0;
  const low = LOW_PORT + slice * width;
  return { low, high: low + width };
}

function ephemeralLow(): number {
  try {
    const low = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0],
    );
    if (Number.isInteger(low) && low > LOW_PORT + BUS_OFFSET + 1000) return low;
  } catch {
    // not Linux, or a range this scheme cannot stay below
  }
  return 32_768;
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Whether 127.0.0.1:`port` accepts a TCP connection within half a second. */
export function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const finish = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => finish(false));
    socket.once('error', () => finish(false));
    socket.once('connect', () => finish(true));
  });
}
