/**
 * The request-body idle timeout (`server.requestBodyIdleTimeoutMs`):
 * a body that receives no byte for that long is given up on, whatever has
 * come before, so a slow client cannot hold a connection (and a proxied
 * request's upstream slot) forever, while an upload that keeps moving is
 * never cut, however long it takes. Only requests with a body pay for a timer.
 *
 * Progress is read from the connection's byte count, not from the body's
 * `data` events: a listener would start the body flowing before its consumer
 * (undici, Koa) reads it, and chunks would be lost. The count is sampled every
 * half period, so the silence that ends a body is between one and one and a
 * half periods long.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

class Watch {
  readonly timer: NodeJS.Timeout;
  quietSamples = 0;
  lastBytes: number;

  constructor(
    readonly req: IncomingMessage,
    readonly socket: Socket,
    halfPeriodMs: number,
    readonly onIdle: () => void,
  ) {
    this.lastBytes = socket.bytesRead;
    this.timer = setInterval(sample, halfPeriodMs, this);
  }
}

/**
 * Calls `onIdle` once when `req`'s body has received no byte for `ms` before
 * arriving whole; nothing for a request without a body.
 */
export function watchBodyIdle(
  req: IncomingMessage,
  res: ServerResponse,
  ms: number,
  onIdle: () => void,
): void {
  if (!hasBody(req) || req.complete) return;
  const watch = new Watch(req, req.socket, Math.max(1, Math.floor(ms / 2)), onIdle);
  res.once('close', () => clearInterval(watch.timer));
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

function sample(watch: Watch): void {
  if (watch.req.complete) {
    clearInterval(watch.timer);
    return;
  }
  const bytes = watch.socket.bytesRead;
  // Bytes waiting in the body's buffer: the reader (an upstream) is slow, not the client.
  if (bytes !== watch.lastBytes || watch.req.readableLength > 0) {
    watch.lastBytes = bytes;
    watch.quietSamples = 0;
    return;
  }
  if (++watch.quietSamples < 2) return;
  clearInterval(watch.timer);
  watch.onIdle();
}
