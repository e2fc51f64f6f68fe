/**
 * The limits of the main listener's HTTP/2 connections (docs/http2.md,
 * "Limits"). What nghttp2 bounds itself is configured here; what Node
 * leaves open (a client that resets every stream it opens, on Node 20
 * where `streamResetBurst` does not exist) is bounded per connection here,
 * the same on every Node version. Each connection ended for it is counted
 * in `tenant_gateway_http2_refusals_total{reason}` and gets GOAWAY.
 */
import {
  constants,
  type Http2Server,
  type SecureServerOptions,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/index.js';
import { GatewayHttp2Request, HEADER_LIST_BYTES } from '../http/http2-request.js';
import { GatewayHttp2Response } from '../http/http2-response.js';
import type { Metrics } from '../ops/metrics.js';
import type { Http2Refusal } from '../ops/http2-metrics.js';

/** Streams a client may reset before their answer began: a burst, then this many a second (CVE-2023-44487). */
export const RESET_BURST = 100;
export const RESETS_PER_SECOND = 33;
/** PING and SETTINGS frames a client may send (each costs an answer): a burst, then this many a second. */
export const CONTROL_BURST = 50;
export const CONTROL_PER_SECOND = 10;

/**
 * Node's options: the advertised settings (concurrent streams, header list
 * size), nghttp2's own floods guards, and the response class that drops
 * HTTP/1.1's connection fields. Node answers a header list past its own
 * cap with RST_STREAM; up to twice the HTTP/1.1 cap it reaches the
 * dispatcher, which answers 431 past the cap itself, as HTTP/1.1 does.
 */
export function http2ServerOptions(server: GatewayConfig['server']): SecureServerOptions {
  return {
    settings: {
      maxConcurrentStreams: server.http2MaxConcurrentStreams,
      maxHeaderListSize: 2 * HEADER_LIST_BYTES,
      enablePush: false,
    },
    // As many fields as an HTTP/1.1 request may have (Node's maxHeadersCount).
    maxHeaderListPairs: 2000,
    // PINGs and SETTINGS answered before the client reads the answers are
    // nghttp2's flood guard (1000 queued frames); the limits on our own:
    maxOutstandingPings: 10,
    maxSettings: 32,
    // Invalid frames and refused streams (over maxConcurrentStreams) before the connection ends.
    maxSessionInvalidFrames: 100,
    maxSessionRejectedStreams: 100,
    // Node 24's (and recent 22's) hold on nghttp2's own rapid-reset limit,
    // at nghttp2's defaults, which Node 20 keeps without the option: a
    // backstop behind the gateway's lower, counted limit (`hardenHttp2`),
    // which must end the connection first, with ENHANCE_YOUR_CALM.
    ...({ streamResetBurst: 1000, streamResetRate: 33 } as object),
    Http2ServerRequest: GatewayHttp2Request,
    // Node's typing wants a class generic in its request type; ours answers any.
    Http2ServerResponse: GatewayHttp2Response as SecureServerOptions['Http2ServerResponse'],
  };
}

export interface Http2Sessions {
  /** GOAWAY to every connection: open streams finish, no new one begins. */
  closeAll(): void;
  destroyAll(): void;
}

/**
 * Watches every connection of `http2`: closes it when idle
 * (`server.keepAliveTimeoutMs`), ends it with GOAWAY ENHANCE_YOUR_CALM when
 * its client resets streams faster than the bucket allows, and counts the
 * connections nghttp2 ended for a flood or a protocol error.
 */
export function hardenHttp2(
  http2: Http2Server,
  server: GatewayConfig['server'],
  deps: { metrics: Metrics; log: Logger },
): Http2Sessions {
  const sessions = new Set<ServerHttp2Session>();
  let closing = false;
  http2.on('session', (session: ServerHttp2Session) => {
    if (closing) return void session.close();
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
    session.setTimeout(server.keepAliveTimeoutMs, () => session.close());
    const resets = new Bucket(RESET_BURST, RESETS_PER_SECOND);
    // A stream the client reset before its answer began: the work it caused is wasted.
    session.on('stream', (stream: ServerHttp2Stream) =>
      stream.once('close', () => {
        if (!stream.aborted || stream.headersSent || resets.take()) return;
        refuse(deps, session, 'rapid_reset');
      }),
    );
    const control = new Bucket(CONTROL_BURST, CONTROL_PER_SECOND);
    const onControl = () => {
      if (!control.take()) refuse(deps, session, 'flood');
    };
    session.on('ping', onControl);
    session.on('remoteSettings', onControl);
    session.on('error', (err: NodeJS.ErrnoException) => {
      const reason = /flood/i.test(err.message) ? 'flood' : 'protocol_error';
      deps.metrics.http2Refused(reason);
      deps.log.info({ reason, code: err.code, cause: err.message }, 'HTTP/2 connection ended');
    });
  });
  return {
    closeAll() {
      closing = true;
      for (const session of sessions) session.close();
    },
    destroyAll() {
      for (const session of sessions) session.destroy();
    },
  };
}

/** Ends the connection with GOAWAY ENHANCE_YOUR_CALM (RFC 9113 §5.4.1), once, counted and logged. */
function refuse(
  deps: { metrics: Metrics; log: Logger },
  session: ServerHttp2Session,
  reason: Http2Refusal,
): void {
  if (session.destroyed) return;
  deps.metrics.http2Refused(reason);
  deps.log.info({ reason }, 'HTTP/2 connection refused');
  // GOAWAY first: destroy's own code reaches the client as NO_ERROR.
  session.goaway(constants.NGHTTP2_ENHANCE_YOUR_CALM);
  session.destroy();
}

/** A token bucket per connection: `burst`, refilled at `perSecond`. */
class Bucket {
  #tokens: number;
  #at = performance.now();

  constructor(
    private readonly burst: number,
    private readonly perSecond: number,
  ) {
    this.#tokens = burst;
  }

  /** Takes one; false when none is left. */
  take(): boolean {
    const now = performance.now();
    this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#at) / 1000) * this.perSecond);
    this.#at = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}
