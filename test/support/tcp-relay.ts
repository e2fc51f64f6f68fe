/**
 * A TCP relay that stands for a slow or broken network link: every byte is
 * passed on after `delayMs` in each direction (order kept), and `blackhole`
 * holds everything back — no FIN, no RST, nothing delivered — until it is
 * lifted, as a partition looks to both ends of a TCP connection (which
 * retransmits, so nothing is lost once the link heals). Used to put a
 * gateway's Redis connections behind a link slower than the client's path to it.
 */
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

export interface TcpRelay {
  port: number;
  /** `redis://127.0.0.1:<port>` when the target is a Redis. */
  url: string;
  /** One-way delay for bytes sent from now on. */
  setDelay(ms: number): void;
  /** Hold back (true) or deliver (false) everything, both ways, on every connection. */
  blackhole(on: boolean): void;
  /** The relayed connections, in the order they were opened. */
  readonly links: RelayedLink[];
  close(): Promise<void>;
}

export interface RelayedLink {
  /** Hold back (true) or deliver (false) this connection's bytes, both ways. */
  blackhole(on: boolean): void;
}

export async function startTcpRelay(
  targetPort: number,
  options: { delayMs?: number } = {},
): Promise<TcpRelay> {
  let delayMs = options.delayMs ?? 0;
  let holding = false;
  const sockets = new Set<Socket>();
  const links: RelayedLink[] = [];

  /**
   * Passes chunks from `from` to `to`, each `delayMs` after it arrived, in
   * order, and none while the relay or `link` holds them back.
   */
  function pipeDelayed(from: Socket, to: Socket, held: () => boolean): () => void {
    const queue: { due: number; chunk: Buffer }[] = [];
    let timer: NodeJS.Timeout | undefined;
    const flush = (): void => {
      clearTimeout(timer);
      timer = undefined;
      if (held()) return;
      const now = Date.now();
      while (queue.length > 0 && (queue[0] as { due: number }).due <= now) {
        const { chunk } = queue.shift() as { chunk: Buffer };
        if (!to.destroyed) to.write(chunk);
      }
      if (queue.length > 0) timer = setTimeout(flush, (queue[0] as { due: number }).due - now);
    };
    from.on('data', (chunk: Buffer) => {
      const last = queue.at(-1)?.due ?? 0;
      queue.push({ due: Math.max(Date.now() + delayMs, last), chunk });
      if (timer === undefined && !held()) timer = setTimeout(flush, delayMs);
    });
    from.on('close', () => {
      clearTimeout(timer);
      to.destroy();
    });
    return flush;
  }
  const resumers = new Set<() => void>();

  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => socket.destroy());
      socket.on('close', () => sockets.delete(socket));
    }
    let linkHeld = false;
    const held = () => holding || linkHeld;
    const resume = [pipeDelayed(client, upstream, held), pipeDelayed(upstream, client, held)];
    const flushBoth = () => resume.forEach((flush) => flush());
    resumers.add(flushBoth);
    client.on('close', () => resumers.delete(flushBoth));
    links.push({
      blackhole(on) {
        linkHeld = on;
        if (!on) flushBoth();
      },
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    setDelay: (ms) => {
      delayMs = ms;
    },
    blackhole: (on) => {
      holding = on;
      if (!on) for (const resume of resumers) resume();
    },
    links,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
