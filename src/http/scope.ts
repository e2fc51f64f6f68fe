/**
 * The per-request scope: opened by the dispatcher for every request, filled
 * in by whichever part handles it, and read once at the end, when the
 * response closes, into the request's outcome record (`ops/outcome.ts`), from
 * which the access log line and the metrics are both derived.
 */
import type { Logger } from 'pino';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { PrincipalKind } from '../auth/credentials/authenticate.js';
import type { ErrorCode } from '../errors.js';

/** The error a request was answered with, as its outcome record reads it (a `GatewayError` is one). */
export interface Refusal {
  code: ErrorCode;
  /** For the log: why a token was refused, the tenant a request named (`GatewayError.detail`). */
  detail?: string | undefined;
}

/** An upstream call's span. */
export interface UpstreamCall {
  /** The upstream's response head arrived with `status`. */
  answered(status: number): void;
  /** The call ended: with the error that ended it, if any. */
  end(error?: unknown): void;
}

/** How a request ended, for its span. */
export interface RequestEnd {
  route: string;
  status: number;
  outcome: string;
  reason: string;
  userId: string | undefined;
  tenantId: string | undefined;
}

/** A request's trace when tracing is on (`ops/tracing.ts`). */
export interface RequestTrace {
  /** 32 hex digits, for the log lines. */
  readonly traceId: string;
  /**
   * Starts an upstream call's span; its context replaces `traceparent` and
   * `tracestate` in `headers`, which go upstream.
   */
  upstreamCall(method: string, upstream: string, headers: IncomingHttpHeaders): UpstreamCall;
  /** Ends the request's span. */
  finish(end: RequestEnd): void;
}

export interface RequestScope {
  requestId: string;
  /** The logger of this request (its lines carry `requestId`). */
  readonly log: Logger;
  /** What handled it: a route's label, `api`, `forward-auth`, `admin` or `none`. */
  route: string;
  /** Who, once authenticated. */
  userId?: string;
  tenantId?: string;
  /** What kind of principal, once authenticated (the request counter's `principal` label). */
  kind?: PrincipalKind;
  /**
   * The error the api (Koa) answered; answers rendered by `sendError` carry
   * theirs on the response itself (`answeredError`).
   */
  refusal?: Refusal;
  /** Time to the upstream's response head, or to the failure of a forwarded request. */
  upstreamMs?: number;
  /** The upstream's status, once its response head arrived. */
  upstreamStatus?: number;
  /** The upstream cut its response after the head went to the client. */
  upstreamBroke?: boolean;
  /** Request body bytes received, where the gateway counted them (proxied bodies). */
  bytesIn?: number;
  /** Undefined when tracing is off. */
  readonly trace?: RequestTrace | undefined;
}

/**
 * A WebSocket upgrade's scope. An upgrade has no response object of its own:
 * its record is written when its exchange ends — the upstream's `101` went
 * to the client, or an HTTP answer went on its socket — or when the client
 * left before either; the WebSocket's life after the `101` is not the request's.
 */
export interface UpgradeScope extends RequestScope {
  /**
   * An HTTP answer on the upgrade's socket (a refusal, the upstream's
   * failure, or the upstream's own answer other than `101`): recorded once
   * written whole, or when the socket closes first.
   */
  answered(res: ServerResponse): void;
  /** The upstream's `101` went to the client: recorded now. */
  switched(): void;
}

/**
 * An Envoy gRPC ext_authz check's scope (`gateway/ext-authz.ts`): a check has
 * no HTTP response of its own, so its record is written by {@link end} with
 * the HTTP status of its verdict (200, or the denied answer's), settled as
 * `/auth/verify`'s would be from that status and {@link RequestScope.refusal}.
 */
export interface CheckScope extends RequestScope {
  /** The verdict went to Envoy: recorded now. */
  end(status: number): void;
}
