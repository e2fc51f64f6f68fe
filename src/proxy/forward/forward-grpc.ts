/**
 * One proxied gRPC call: a client's HTTP/2 stream relayed to a stream on a
 * pooled HTTP/2 session to the upstream (`grpc-sessions.ts`). Messages flow
 * both ways through `pipe`, each side pausing the other (HTTP/2 flow
 * control does the rest): nothing is buffered beyond the streams' windows,
 * so a message stream of any length, or a message of many megabytes, passes.
 *
 * - trailers: the upstream's (`grpc-status`, `grpc-message`, custom ones) are
 *   the client's trailers; a trailers-only answer stays trailers-only;
 * - deadlines: `grpc-timeout` goes upstream as sent and bounds the
 *   gateway's wait too (then `grpc-status` 4); the route's `timeoutMs` bounds
 *   the wait for the upstream's response head (504, `grpc-status` 4);
 * - cancellation: a client's RST_STREAM cancels the upstream stream, and an
 *   upstream's reset cancels the client's;
 * - failures: an upstream refused, reset or gone before its head is
 *   `bad_gateway` (`grpc-status` 14), answered in gRPC's shape by `sendError`.
 */
import { constants, type ClientHttp2Stream, type IncomingHttpHeaders } from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { GatewayError } from '../../errors.js';
import { encodeGrpcMessage, GRPC_STATUS } from '../../http/grpc-refusal.js';
import { sendError } from '../../http/respond.js';
import type { RequestScope } from '../../http/scope.js';
import type { ForwardTarget } from './forward-http.js';
import { SentBody } from './grpc-replay.js';
import type { GrpcSessions } from './grpc-sessions.js';
import { keepGatewayCookies } from './response-headers.js';
import { errorCode, upstreamError, upstreamTimeout } from './upstream-error.js';

/** What the client's side of a call is, under Node's HTTP/2 compatibility API. */
type ClientResponse = ServerResponse & {
  stream?: {
    respond(
      headers: Record<string, string | number>,
      options?: { endStream?: boolean; waitForTrailers?: boolean },
    ): void;
    close(code?: number): void;
    destroyed: boolean;
  };
  addTrailers(trailers: Record<string, string>): void;
};

/** Never relayed either way: HTTP/2 forbids connection-specific fields, and framing is the streams'. */
const NOT_RELAYED = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'host',
  'te',
  'content-length',
  'http2-settings',
]);

/** Upstream URLs whose reading is kept ({@link upstreamOf}): far more than any config names. */
const MAX_KNOWN_UPSTREAMS = 1024;

/** The longest `grpc-timeout` honoured: its 8 digits of hours are far past any timer. */
const MAX_DEADLINE_MS = 2 ** 31 - 1;

const DEADLINE = new GatewayError('gateway_timeout', 'The call ran past its grpc-timeout.');
const UPSTREAM_BROKE = new GatewayError('bad_gateway', "The upstream's connection failed.");

/** Sends of one call, the first included, while the upstream refuses it unprocessed. */
const MAX_ATTEMPTS = 4;

/** A live call's handle, for revocation: ends it with `grpc-status` 16 (or 14), naming `code`. */
export type EndCall = (status: number, code: string) => void;

/**
 * Forwards the call (its headers rewritten by the pipeline, `req.url` the
 * path the upstream sees); `opened` gets the handle that ends it while it lives.
 */
export function forwardGrpc(
  req: IncomingMessage,
  res: ServerResponse,
  sessions: GrpcSessions,
  target: ForwardTarget,
  scope: RequestScope,
  opened?: (end: EndCall) => () => void,
): void {
  const call = new GrpcCall(req, res as ClientResponse, scope, sessions, target);
  call.send();
  call.watch(target.timeoutMs, deadlineMs(req.headers['grpc-timeout']));
  const forget = opened?.((status, code) => call.end(status, code));
  res.once('close', () => {
    forget?.();
    call.clientClosed();
  });
}

/** What a call needs of its route's upstream URL, read once per URL rather than once per call. */
interface Upstream {
  origin: string;
  host: string;
  scheme: 'http' | 'https';
  /** The URL's path without its trailing slashes: the call's path goes under it. */
  base: string;
}

const upstreams = new Map<string, Upstream>();

function upstreamOf(upstream: string): Upstream {
  let known = upstreams.get(upstream);
  if (known === undefined) {
    const url = new URL(upstream);
    known = {
      origin: url.origin,
      host: url.host,
      scheme: url.protocol === 'https:' ? 'https' : 'http',
      base: url.pathname.replace(/\/+$/, ''),
    };
    // A config reload may name other upstreams: the map is bounded, never a leak.
    if (upstreams.size >= MAX_KNOWN_UPSTREAMS) upstreams.clear();
    upstreams.set(upstream, known);
  }
  return known;
}

class GrpcCall {
  up: ClientHttp2Stream | undefined;
  headTimer: NodeJS.Timeout | undefined;
  deadline: NodeJS.Timeout | undefined;
  started = performance.now();
  answered = false;
  finished = false;
  trailersSeen = false;
  /** The upstream's session failed after its head: the client's call ends with 14. */
  sessionBroke = false;
  attempts = 0;
  readonly upstream: Upstream;
  readonly sent: SentBody;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ClientResponse,
    readonly scope: RequestScope,
    readonly sessions: GrpcSessions,
    readonly target: ForwardTarget,
  ) {
    this.upstream = upstreamOf(target.upstream);
    this.sent = new SentBody(req);
  }

  /**
   * Opens the upstream stream on a pooled session and sends the request's
   * bytes: those sent so far (a retry), then the rest as they come. Events
   * of a stream the call has left (refused, then retried) are ignored.
   */
  send(): void {
    const { session, done } = this.sessions.take(this.upstream.origin, this.target.tls);
    const up = session.request(upstreamHeaders(this.req, this.upstream), { endStream: false });
    this.up = up;
    this.attempts++;
    up.once('close', done);
    up.on('response', (headers, flags) => this.up === up && this.response(headers, flags));
    up.on('trailers', (trailers) => this.up === up && this.trailers(trailers));
    up.on('error', (err: Error) => this.up === up && this.failed(err));
    up.once('close', () => this.up === up && this.upstreamClosed());
    for (const chunk of this.sent.chunks) up.write(chunk);
    if (this.req.readableEnded) up.end();
    else this.req.pipe(up);
  }

  /** Refused unprocessed (RST_STREAM REFUSED_STREAM) before any answer, its bytes kept: sent again. */
  retried(err: unknown): boolean {
    const up = this.up as ClientHttp2Stream;
    const refused =
      errorCode(err) === 'ERR_HTTP2_STREAM_ERROR' &&
      up.rstCode === constants.NGHTTP2_REFUSED_STREAM;
    if (!refused || !this.sent.replayable || this.attempts >= MAX_ATTEMPTS) return false;
    this.req.unpipe(up);
    try {
      this.send();
    } catch (again) {
      // The pool handed a session that cannot open streams: answered as any failure.
      this.up = undefined;
      this.failed(again);
    }
    return true;
  }

  watch(headMs: number, deadlineMs: number | undefined): void {
    this.headTimer = setTimeout(() => this.failed(upstreamTimeout()), headMs);
    if (deadlineMs !== undefined)
      this.deadline = setTimeout(
        () => this.end(GRPC_STATUS.DEADLINE_EXCEEDED, DEADLINE.code),
        deadlineMs,
      );
  }

  /** The upstream's response head: relayed, or as trailers-only when it ends the stream. */
  response(headers: IncomingHttpHeaders, flags: number): void {
    clearTimeout(this.headTimer);
    this.sent.stop();
    this.scope.upstreamMs = performance.now() - this.started;
    const status = Number(headers[':status']);
    this.scope.upstreamStatus = status;
    keepGatewayCookies(headers, this.target.reservedCookies);
    const head = relayInto({ ':status': status }, headers);
    this.answered = true;
    const stream = this.res.stream;
    if ((flags & constants.NGHTTP2_FLAG_END_STREAM) !== 0 && stream !== undefined) {
      this.finished = true;
      if (!stream.destroyed) stream.respond(head, { endStream: true });
      return;
    }
    if (stream === undefined) {
      this.res.writeHead(status, relayInto({}, headers));
    } else {
      // Straight on the stream, as the compatibility API's `writeHead` would
      // (waiting for the trailers `addTrailers` gives it), without checking
      // each field again: nghttp2 did as it read them.
      this.res.statusCode = status;
      if (!stream.destroyed) stream.respond(head, { waitForTrailers: true });
    }
    // Ended by `upstreamClosed`, once it is known whether the upstream finished or reset.
    (this.up as ClientHttp2Stream).pipe(this.res, { end: false });
  }

  trailers(trailers: IncomingHttpHeaders): void {
    this.trailersSeen = true;
    this.res.addTrailers(relayInto({}, trailers));
  }

  /**
   * The upstream failed (refused, reset, timed out) before its head:
   * answered 14 or 4, unless it refused the call unprocessed and the call is
   * sent again. After its head, the stream's close says how it ended
   * (`upstreamClosed`); a failure of its session, not a reset of its stream,
   * is noted for that.
   */
  failed(err: unknown): void {
    if (this.answered && errorCode(err) !== 'ERR_HTTP2_STREAM_ERROR') this.sessionBroke = true;
    if (this.finished || this.answered) return;
    if (this.up !== undefined && this.retried(err)) return;
    this.clearTimers();
    this.finished = true;
    this.sent.stop();
    this.scope.upstreamMs ??= performance.now() - this.started;
    this.scope.log.warn({ code: errorCode(err) }, 'gRPC upstream failed');
    this.up?.close(constants.NGHTTP2_CANCEL);
    sendError(this.res, upstreamError(err));
  }

  /**
   * The upstream stream closed: after its trailers, the client's answer ends
   * with them; reset after its head, the client's stream is reset with the
   * same code; its session failed after its head (a GOAWAY with an error,
   * the connection lost), the client's call ends with 14 `bad_gateway`;
   * closed before its head, the call failed.
   */
  upstreamClosed(): void {
    if (this.finished) return this.clearTimers();
    if (this.sessionBroke) {
      this.scope.upstreamBroke = true;
      return this.end(GRPC_STATUS.UNAVAILABLE, UPSTREAM_BROKE.code);
    }
    const up = this.up as ClientHttp2Stream;
    // Node reports a reset that comes after our END_STREAM with code 0 (and
    // no 'aborted'): a gRPC answer that closed without trailers was cut all the same.
    const code =
      up.rstCode || (this.trailersSeen ? constants.NGHTTP2_NO_ERROR : constants.NGHTTP2_CANCEL);
    if (!this.answered) return this.failed(Object.assign(new Error('closed'), { code: 'RST' }));
    this.clearTimers();
    this.finished = true;
    if (code === constants.NGHTTP2_NO_ERROR) {
      this.res.end();
      return;
    }
    this.scope.upstreamBroke = true;
    this.res.stream?.close(code);
  }

  /** The client's stream closed: finished, or cancelled (RST_STREAM) — then so is the upstream's. */
  clientClosed(): void {
    this.clearTimers();
    this.finished = true;
    const up = this.up;
    if (up !== undefined && !up.closed) up.close(constants.NGHTTP2_CANCEL);
  }

  /** Ends the call now with `status` (deadline, revocation): the upstream is cancelled. */
  end(status: number, code: string): void {
    if (this.finished) return;
    this.finished = true;
    this.clearTimers();
    const up = this.up;
    if (up !== undefined) {
      up.unpipe(this.res);
      this.req.unpipe(up);
      up.close(constants.NGHTTP2_CANCEL);
    }
    const fields = { 'grpc-status': String(status), 'grpc-message': encodeGrpcMessage(code) };
    if (!this.answered && !this.res.headersSent) {
      const stream = this.res.stream;
      if (stream !== undefined && !stream.destroyed)
        stream.respond(
          { ':status': 200, 'content-type': 'application/grpc', ...fields },
          { endStream: true },
        );
      return;
    }
    this.res.addTrailers(fields);
    this.res.end();
  }

  clearTimers(): void {
    clearTimeout(this.headTimer);
    clearTimeout(this.deadline);
  }
}

/** The upstream request's header block: the pipeline's rewritten headers, HTTP/2's own pseudo-headers. */
function upstreamHeaders(req: IncomingMessage, upstream: Upstream): Record<string, string> {
  const out = relayInto(
    {
      ':method': 'POST',
      ':path': upstream.base + (req.url ?? '/'),
      ':authority': upstream.host,
      ':scheme': upstream.scheme,
    },
    req.headers,
  );
  // gRPC requires it (and it is the only TE HTTP/2 allows).
  out.te = 'trailers';
  return out;
}

/**
 * Every field of `headers` but the pseudo-headers and the connection-specific
 * ones, added to `out`. Names are lower-case already, both ways: nghttp2
 * refuses an upper-case name in HTTP/2 (RFC 9113 §8.2.1), and the header
 * policy writes its own lower-case.
 */
function relayInto(
  out: Record<string, string | number>,
  headers: IncomingHttpHeaders,
): Record<string, string> {
  for (const name in headers) {
    if (name.charCodeAt(0) === 0x3a || NOT_RELAYED.has(name)) continue;
    const value = headers[name];
    if (value === undefined) continue;
    out[name] =
      typeof value === 'string' ? value : Array.isArray(value) ? value.join(', ') : String(value);
  }
  return out as Record<string, string>;
}

/** `grpc-timeout` (gRPC over HTTP/2: 1–8 digits and a unit H M S m u n) in ms; undefined when absent or malformed. */
export function deadlineMs(value: string | string[] | undefined): number | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^(\d{1,8})([HMSmun])$/.exec(value);
  if (match === null) return undefined;
  const amount = Number(match[1]);
  const ms = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 }[match[2] as 'H'];
  return Math.min(MAX_DEADLINE_MS, Math.ceil(amount * ms));
}
