/**
 * The WebSocket entry way: an upgrade request (the server's `upgrade` event).
 * It opens the upgrade's scope with the request recorder (one log line, one
 * metric path, as every request), finds the route, asks the admission
 * pipeline (`decide/pipeline.ts`) for the verdict, and hands the rewritten
 * request to the forwarder; a refusal is an HTTP answer on the socket. It
 * decides nothing itself.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RequestRecorder } from '../ops/request-recorder.js';
import { sendUpgradeError } from '../http/respond.js';
import type { UpgradeScope } from '../http/scope.js';
import { normaliseTarget, type NormalisedTarget } from './decide/normalise-path.js';
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

export interface UpgradeEntryDeps extends Admission {
  recorder: RequestRecorder;
  forwarder: Forwarder;
  /** Keeps each open WebSocket's token alive, or closes it (revocation, expiry, …). */
  liveWebSockets?: LiveWebSockets | undefined;
}

export function handleUpgrade(
  deps: UpgradeEntryDeps,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): void {
  const scope = deps.recorder.openUpgrade(req, socket);
  socket.on('error', destroySocket);
  let target: NormalisedTarget;
  let route: ProxiedRoute;
  let hosts: readonly (string | undefined)[];
  try {
    target = normaliseTarget(req.url);
    hosts = hostsOf(deps.settings, req);
    const found = routeFor(deps.settings, target.path, hosts, 'No route for this upgrade.');
    scope.route = found.label;
    route = proxiedRoute(found);
  } catch (err) {
    return sendUpgradeError(req, socket, err, scope);
  }
  Promise.resolve()
    .then(() => decide(deps, req, target, scope, route, hosts))
    .then(
      (principal) => open(deps, { req, socket, head, scope }, target, route, principal),
      (err: unknown) => sendUpgradeError(req, socket, err, scope),
    );
}

interface Upgrade {
  req: IncomingMessage;
  socket: Duplex;
  head: Buffer;
  scope: UpgradeScope;
}

/** Admitted: the request rewritten and forwarded; its token watched while the WebSocket lives. */
function open(
  deps: UpgradeEntryDeps,
  { req, socket, head, scope }: Upgrade,
  target: NormalisedTarget,
  route: ProxiedRoute,
  principal: Verdict,
): void {
  if (socket.destroyed) return;
  rewriteForUpstream(deps.settings.headers, req, target, route, principal, scope.requestId, true);
  const live = deps.liveWebSockets;
  // An anonymous WebSocket (public route) has no token to end it.
  deps.forwarder.ws(req, socket, head, route, scope, (upstream) => {
    if (principal !== undefined) live?.track(socket, upstream, principal);
  });
}

function destroySocket(this: Duplex): void {
  this.destroy();
}
