/**
 * Pool clients that close upstream connections nobody uses. When a client
 * hangs up, the gateway aborts its upstream request; undici does that by
 * destroying the connection, then opens a new one for the aborted request and
 * never sends anything on it (nodejs/undici#5845). Each hang-up would leave
 * one more idle connection at the upstream for undici's keep-alive time (4 s).
 *
 * A connection is unused when, 100 ms after opening, it has sent nothing and
 * its client has no request running or queued. Nothing sent alone is not
 * enough: undici writes the head of a request whose body streams only with
 * the body's first chunk, so a connection carrying a request whose body is
 * late (a slow client, one waiting for `100 Continue`) has sent nothing
 * either — closing it failed that request with a 502. Each connection has a
 * client of its own (one `Client` per connection of a `Pool`), so the
 * client's running requests are the connection's. One timer per connection,
 * not per request.
 */
import type { Socket } from 'node:net';
import { Client, type Dispatcher, type buildConnector } from 'undici';

/** Long enough for a request to be given to a fresh connection. */
export const UNUSED_CONNECTION_MS = 100;

/**
 * A `Pool` `factory`: its clients connect with the pool's connector (`connect`,
 * built by the pool from its TLS options) and close a connection they opened
 * for nobody.
 */
export function closingUnusedConnections(
  unusedMs = UNUSED_CONNECTION_MS,
): (origin: URL, options: object) => Dispatcher {
  return (origin, options) => {
    const { connect, ...rest } = options as Client.Options & { connect: buildConnector.connector };
    const client: Client = new Client(origin, {
      ...rest,
      connect: (target, callback) => {
        connect(target, (...args) => {
          const [err, socket] = args;
          if (err === null) closeIfUnused(socket, client, unusedMs);
          callback(...args);
        });
      },
    });
    return client;
  };
}

function closeIfUnused(socket: Socket, client: Client, unusedMs: number): void {
  const sent = socket.bytesWritten;
  const check = setTimeout(() => {
    const { running, pending } = client.stats;
    if (socket.bytesWritten === sent && running === 0 && pending === 0) socket.destroy();
  }, unusedMs);
  check.unref();
  socket.once('close', () => clearTimeout(check));
}
