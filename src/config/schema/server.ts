/**
 * How the listeners treat their clients: the client-side timeouts (and the
 * rule that Node's headers timeout fits in `limits.requestTimeoutMs`), what
 * `/readyz` waits for, and the drain at shutdown.
 */
import { z } from 'zod';
import { boolean, integer } from './values.js';

export const server = z
  .strictObject({
    // Node's own default is 5 s, below every balancer's idle timeout.
    keepAliveTimeoutMs: integer(1000, 3_600_000)
      .default(65_000)
      .describe(
        'idle keep-alive connections from clients close after this; keep it above the idle timeout of any load balancer in front (AWS ALB 60 s, nginx `keepalive_timeout` 60 s, GCP 600 s: raise it there), or the balancer may reuse a connection the gateway is closing and answer 502',
      ),
    headersTimeoutMs: integer(100, 600_000)
      .default(60_000)
      .describe(
        'a client slower than this with its request headers gets 408 (slowloris); at most `limits.requestTimeoutMs` when that is set',
      ),
    requestBodyIdleTimeoutMs: integer(100, 3_600_000)
      .default(60_000)
      .describe(
        "a request body (proxied or to the gateway's own endpoints) that receives no byte for this long gets 408, the connection closes and its upstream request is aborted; an upload that keeps moving is never cut",
      ),
    http2MaxConcurrentStreams: integer(1, 1000)
      .default(128)
      .describe(
        'with `listen.http2`: the streams (requests) one HTTP/2 connection may have open at once; a client asking for more has them refused (RST_STREAM, REFUSED_STREAM) and counted',
      ),
  })
  .meta({
    description: 'Timeouts and limits on the client side of the gateway.',
    examples: [{ keepAliveTimeoutMs: 620000, headersTimeoutMs: 30000 }],
  })
  .prefault({});

/**
 * Node refuses a server whose headers timeout exceeds its request timeout
 * (`limits.requestTimeoutMs`). Values may be partly invalid.
 */
export function checkTimeouts(server: unknown, limits: unknown, ctx: z.RefinementCtx): void {
  const headers = (server as { headersTimeoutMs?: unknown } | undefined)?.headersTimeoutMs;
  const request = (limits as { requestTimeoutMs?: unknown } | undefined)?.requestTimeoutMs;
  if (typeof headers !== 'number' || typeof request !== 'number') return;
  if (request > 0 && headers > request) {
    ctx.addIssue({
      code: 'custom',
      path: ['server', 'headersTimeoutMs'],
      message: `must not exceed limits.requestTimeoutMs (${request})`,
    });
  }
}

/** See `ops/readiness.ts`. */
export const readiness = z
  .strictObject({
    requireStore: boolean()
      .default(false)
      .describe(
        '`/readyz` turns 503 while the store is unreachable. Off by default: every instance would leave the Service at once',
      ),
  })
  .meta({
    description: 'What `/readyz` needs besides signing keys and not draining.',
    examples: [{ requireStore: true }],
  })
  .prefault({});

export const shutdown = z
  .strictObject({
    drainSeconds: integer(0, 3600)
      .default(10)
      .describe('how long in-flight requests and WebSockets get to finish after SIGTERM'),
  })
  .meta({
    description: 'Graceful shutdown.',
    examples: [{ drainSeconds: 30 }],
  })
  .prefault({});
