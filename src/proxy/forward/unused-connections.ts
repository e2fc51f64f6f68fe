/**
 * A connector that closes upstream connections nobody uses. When a client
 * hangs up, the gateway aborts its upstream request; undici does that by
 * destroying the connection, then opens a new one for the aborted request and
 * never sends anything on it (nodejs/undici#5845). Each hang-up would leave
 * one more idle connection at the upstream for undici's keep-alive time (4 s).
 *
 * undici opens a connection only for a request that waits for one and writes
 * it in the same turn of the event loop as the connection comes up (a
 * socket's `bytesWritten` counts what is queued), so a connection that has
 * sent nothing 100 ms after opening was opened for nobody: it is closed. One
 * timer per connection, not per request.
 */
import { buildConnector } from 'undici';

/** Long enough for any request to be written on a fresh connection. */
export const UNUSED_CONNECTION_MS = 100;

export function closingUnusedConnections(
  options: buildConnector.BuildOptions = {},
  unusedMs = UNUSED_CONNECTION_MS,
): buildConnector.connector {
  const connect = buildConnector(options);
  return (target, callback) => {
    connect(target, (...args) => {
      const [err, socket] = args;
      if (err === null) {
        const sent = socket.bytesWritten;
        const check = setTimeout(() => {
          if (socket.bytesWritten === sent) socket.destroy();
        }, unusedMs);
        check.unref();
        socket.once('close', () => clearTimeout(check));
      }
      callback(...args);
    });
  };
}
