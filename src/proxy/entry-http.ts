/**
 * The HTTP entry way: a request for a route. It finds the route and answers
 * its CORS preflight, asks the admission pipeline (`decide/pipeline.ts`) for
 * the verdict, and hands the rewritten request to the forwarder. It decides
 * nothing itself.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
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

export interface HttpEntryDeps extends Admission {
  forwarder: Forwarder;
}

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
  deps.forwarder.web(req, res, route, scope);
}
