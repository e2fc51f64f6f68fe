/**
 * Forwarding on undici: one `Pool` per upstream origin
 * (keep-alive, pipelining 1), HTTP exchanges on its dispatch API
 * (`forward-http.ts`), WebSocket upgrades on the same pools
 * (`forward-upgrade.ts`). Each origin's connections are shared between
 * tenants by its slots (`tenant-slots.ts`): a request waits for a free one
 * within its route's timeout, and a tenant past its share is refused with
 * 429. The route's timeout is a 504, a refused or broken upstream a 502; no
 * upstream failure can reach the process as an unhandled error. gRPC routes
 * go over pooled HTTP/2 sessions instead (`grpc-sessions.ts`, `forward-grpc.ts`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { UPSTREAM_POOL_DEFAULTS } from '../../config/schema/limits.js';
import { GatewayError } from '../../errors.js';
import { sendUpgradeError } from '../../http/respond.js';
import type { RequestScope, UpgradeScope } from '../../http/scope.js';
import { abandonExchange, forwardHttp, type ForwardTarget } from './forward-http.js';
import { forwardGrpc, type EndCall } from './forward-grpc.js';
import { forwardUpgrade } from './forward-upgrade.js';
import { createGrpcSessions } from './grpc-sessions.js';
import type { SlotLimits } from './tenant-slots.js';
import { createUpstreamPools, type UpstreamTls } from './upstream-pools.js';

export type { ForwardTarget } from './forward-http.js';

export interface Forwarder {
  /** Forwards; records the upstream's time to response headers on `scope`. */
  web(req: IncomingMessage, res: ServerResponse, target: ForwardTarget, scope: RequestScope): void;
  /**
   * Forwards an upgrade; `scope` is told how its exchange ended. `opened` is
   * called with the upstream's socket once the upstream accepted, just before
   * the 101 goes to the client.
   */
  ws(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    target: ForwardTarget,
    scope: UpgradeScope,
    opened?: (upstream: Duplex) => void,
  ): void;
  /**
   * Forwards a gRPC call over HTTP/2 (`forward-grpc.ts`); `opened` gets the
   * handle that ends it while it lives and returns the undo of its watch.
   */
  grpc(
    req: IncomingMessage,
    res: ServerResponse,
    target: ForwardTarget,
    scope: RequestScope,
    opened?: (end: EndCall) => () => void,
  ): void;
  /** Aborts the upstream request answering `res`, if any (the gateway answers it instead). */
  abandon(res: ServerResponse): void;
  /** Keeps the connections to these upstreams; closes the others' once idle (config reload). */
  retainUpstreams(upstreams: Iterable<{ upstream: string; tls?: UpstreamTls | undefined }>): void;
  /** Proxied WebSockets still open. */
  openWebSockets(): number;
  /** Destroys proxied WebSockets and upstream connections. */
  close(): void;
}

/**
 * @param pool connections per upstream origin and each tenant's share
 *   (config `upstreamPool`).
 */
export function createForwarder(pool: SlotLimits = UPSTREAM_POOL_DEFAULTS): Forwarder {
  const pools = createUpstreamPools({ limits: pool });
  const grpcSessions = createGrpcSessions();
  /** Client sockets of proxied WebSockets: the HTTP server no longer tracks them. */
  const webSockets = new Set<Duplex>();

  return {
    web(req, res, target, scope) {
      forwardHttp(req, res, pools.target(target.upstream, target.tls), target, scope);
    },
    ws(req, socket, head, target, scope, opened) {
      if (!isWebSocketUpgrade(req)) {
        sendUpgradeError(
          req,
          socket,
          new GatewayError('invalid_request', 'Only WebSocket upgrades (GET) are proxied.'),
          scope,
        );
        return;
      }
      webSockets.add(socket);
      socket.once('close', () => webSockets.delete(socket));
      forwardUpgrade(
        { req, socket, head, scope },
        pools.target(target.upstream, target.tls),
        target,
        opened ?? noop,
      );
    },
    grpc(req, res, target, scope, opened) {
      forwardGrpc(req, res, grpcSessions, target, scope, opened);
    },
    abandon: abandonExchange,
    retainUpstreams: (upstreams) => pools.retain(upstreams),
    openWebSockets: () => webSockets.size,
    close() {
      for (const socket of webSockets) socket.destroy();
      grpcSessions.close();
      pools.destroy().catch(() => {});
    },
  };
}

function noop(): void {}

function isWebSocketUpgrade(req: IncomingMessage): boolean {
  return req.method === 'GET' && req.headers.upgrade?.toLowerCase() === 'websocket';
}
