/**
 * The HTTP entry way: a request for a route. It finds the route and answers
 * its CORS preflight, asks the admission pipeline (`decide/pipeline.ts`) for
 * the verdict, and hands the rewritten request to the forwarder. It decides
 * nothing itself.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '../errors.js';
import { markGrpc } from '../http/grpc-refusal.js';
import type { RequestScope } from '../http/scope.js';
import type { NormalisedTarget } from './decide/normalise-path.js';
import {
  decide,
  hostsOf,
  proxiedRoute,
  rewriteForUpstream,
  routeFor,
  type Admission,
  type Verdict,
} from './decide/pipeline.js';
import type { ProxiedRoute } from './decide/routes.js';
import type { Forwarder } from './forward/forwarder.js';
import type { LiveWebSockets } from './forward/live-websockets.js';

export interface HttpEntryDeps extends Admission {
  forwarder: Forwarder;
  /** Ends a live gRPC call once its credential is revoked, as it closes a WebSocket. */
  liveWebSockets?: LiveWebSockets | undefined;
}

const GRPC_NEEDS_H2 = new GatewayError(
  'invalid_request',
  'This is a gRPC route: gRPC needs HTTP/2 (h2, or h2c by prior knowledge).',
);

/**
 * route → CORS → verdict → rewrite → forward. Without an await when the
 * token and its session are cached (the steady state); a refusal is thrown
 * or rejected to the caller's `fail`.
 */
export function forwardRequest(
  deps: HttpEntryDeps,
  req: IncomingMessage,
  res: ServerResponse,
  scope: RequestScope,
  target: NormalisedTarget,
): void | Promise<void> {
  const hosts = hostsOf(deps.settings, req);
  const found = routeFor(deps.settings, target.path, hosts, 'No such endpoint and no route.');
  scope.route = found.label;
  if (found.protocol === 'grpc') {
    // Its refusals are in gRPC's shape, from here on.
    markGrpc(res);
    if (req.httpVersionMajor < 2) throw GRPC_NEEDS_H2;
  }
  if (found.cors?.preflight(req, res)) return;
  found.cors?.decorate(req, res);
  const route = proxiedRoute(found);
  const verdict = decide(deps, req, target, scope, route, hosts);
  if (verdict instanceof Promise) {
    return verdict.then((principal) => send(deps, req, res, scope, target, route, principal));
  }
  send(deps, req, res, scope, target, route, verdict);
}

function send(
  deps: HttpEntryDeps,
  req: IncomingMessage,
  res: ServerResponse,
  scope: RequestScope,
  target: NormalisedTarget,
  route: ProxiedRoute,
  principal: Verdict,
): void {
  if (res.destroyed) return; // the client left while we were deciding
  rewriteForUpstream(deps.settings.headers, req, target, route, principal, scope.requestId, false);
  if (route.protocol !== 'grpc') return deps.forwarder.web(req, res, route, scope);
  const live = deps.liveWebSockets;
  // A public call has no token to end it.
  deps.forwarder.grpc(req, res, route, scope, (end) =>
    principal === undefined || live === undefined ? noop : live.trackCall(end, principal),
  );
}

function noop(): void {}
