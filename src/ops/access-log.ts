/**
 * The access log: one line per request, written from its outcome record
 * (`outcome.ts`) when the response closes. Its fields are a fixed list that
 * holds no secret by construction — no header but the user agent, the path
 * without its query (a query may carry credentials), ids, sizes, times, an
 * error CODE — so it skips pino's redaction walk, which measured two thirds
 * of a line's cost on the proxy path (`test/bench/README.md`).
 * Same destination and base fields as the process log.
 */
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { Settled } from './outcome.js';
import type { RequestScope } from '../scope.js';

/** The request the ingress asked about, for a forward-auth line. */
export interface OriginalRequest {
  method: string | undefined;
  host: string | undefined;
  uri: string | undefined;
}

export interface AccessLine {
  req: IncomingMessage;
  /** The request's URL as it arrived (the dispatcher rewrites `req.url` for the upstream). */
  url: string | undefined;
  scope: RequestScope;
  settled: Settled;
  durationMs: number;
  bytesIn: number;
  bytesOut: number;
  /** The client as the trusted-proxy rules resolve it. */
  clientIp: string;
  original: OriginalRequest | undefined;
}

export interface AccessLog {
  /** Whether a line at this level would be written: build nothing otherwise. */
  enabled(level: 'info' | 'debug'): boolean;
  write(level: 'info' | 'debug', line: AccessLine): void;
}

/** Longer user agents are cut: a client must not choose the size of our lines. */
const MAX_USER_AGENT = 256;

export function createAccessLog(log: Logger): AccessLog {
  const access = log.child({}, { redact: { paths: [] } });
  return {
    enabled: (level) => access.isLevelEnabled(level),
    write(level, { req, url, scope, settled, durationMs, bytesIn, bytesOut, clientIp, original }) {
      const agent = req.headers['user-agent'];
      access[level](
        {
          requestId: scope.requestId,
          traceId: scope.trace?.traceId,
          method: req.method,
          path: pathOf(url),
          route: scope.route,
          status: settled.status,
          outcome: settled.outcome,
          reason: settled.reason === '' ? undefined : settled.reason,
          durationMs: round(durationMs),
          upstreamMs: scope.upstreamMs === undefined ? undefined : round(scope.upstreamMs),
          upstreamStatus: scope.upstreamStatus,
          tenantId: scope.tenantId,
          userId: scope.userId,
          clientIp,
          userAgent: agent === undefined ? undefined : agent.slice(0, MAX_USER_AGENT),
          bytesIn,
          bytesOut,
          original,
        },
        'request',
      );
    },
  };
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}

/** The path without the query: never log a query, it may carry credentials. */
export function pathOf(url: string | undefined): string {
  const raw = url ?? '/';
  const q = raw.indexOf('?');
  return q < 0 ? raw : raw.slice(0, q);
}
