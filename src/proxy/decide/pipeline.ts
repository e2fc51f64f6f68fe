/**
 * The admission pipeline. Every admission decision lives here: a new kind of
 * credential or a new check is one change in this file, and applies to the
 * three entry ways at once — proxied HTTP (`proxy/entry-http.ts`), WebSocket
 * upgrades (`proxy/entry-upgrade.ts`) and forward-auth's `/auth/verify`
 * (`proxy/entry-verify.ts`). They only adapt what they read to
 * {@link decide}'s input and its verdict to their output; none of them
 * imports a check of its own (`test/proxy/one-pipeline.test.ts` holds them
 * to it).
 *
 * The steps, in order:
 *
 *   route      the route the request is forwarded under ({@link routeFor}:
 *              one for every host it is addressed to, else refused)
 *   framing    a request the gateway cannot frame unambiguously is refused
 *              (`header-policy.ts` `checkFraming`)
 *   readings   the tenant checks: each reading of the request under the
 *              route it falls under, and under the route a permissive
 *              upstream would read its path as (`admit.ts` `tenantChecks`);
 *              forward-auth reads every source of the original request
 *              (`verify-request.ts`)
 *   anonymous? no credential of the gateway's (`auth/credentials/read-credential.ts`),
 *              every reading under a public route: no principal, no limit
 *              (`admit.ts` `anonymousAllowed`)
 *   admit      the credential verified (a bearer token; an API key where
 *              they are on, `auth/credentials/request-credentials.ts`; on
 *              `auth: session` routes the session cookie when neither is
 *              sent, `auth/credentials/session-credentials.ts`), then each
 *              check's tenant types and tenant rules (`admit.ts`); the
 *              principal is written to the request's scope first, so a later
 *              refusal names it
 *   sign in?   refused on a session route, a page load without a session
 *              (or with an ended one) is sent to sign in instead: 302 to
 *              `/1/sign-in?return_to=…` (`sign-in-redirect.ts`); not on
 *              forward-auth, whose ingress redirects on 401
 *   origin     a request a session cookie admitted that may change
 *              something (an unsafe method, a WebSocket upgrade) must come
 *              from the same origin, else 403 `csrf_refused`
 *              (`session-origin.ts`, `request-origin.ts`)
 *   scopes     each check's route: the scopes it requires for the method
 *              (forward-auth: each original method, `verify-request.ts`
 *              `originalMethods`; a gRPC route: the gRPC method, which is
 *              the path) must all be the token's, else 403
 *              `insufficient_scope` ({@link demandScopes}, compiled per
 *              route and method in `route-scopes.ts`)
 *   limit      the route's per-tenant and per-user token buckets
 *              (`route-rate-limits.ts`); forward-auth takes none — the
 *              ingress, not the gateway, forwards that request
 *   inject     forwarded requests: identity headers set after every client
 *              copy is stripped, the URL the upstream sees
 *              ({@link rewriteForUpstream}); forward-auth: the identity
 *              headers of its 200 ({@link verifiedHeaders})
 *
 * A refusal is a thrown or rejected `GatewayError` at the step that refused.
 * The verdict comes without an await when the token and its session are
 * cached and no bucket waits for a lease (the steady state): nothing here
 * allocates a closure on that path.
 */
import type { IncomingMessage } from 'node:http';
import type { Principal } from '../../auth/credentials/authenticate.js';
import { GatewayError } from '../../errors.js';
import { authorizationCarriesApiKey } from './api-key-values.js';
import { takesSessions, tenantChecks, type Admit, type TenantCheck, type Who } from './admit.js';
import type { HeaderPolicy } from './header-policy.js';
import type { NormalisedTarget } from './normalise-path.js';
import type { RouteRateLimit } from '../rate-limits/rate-policy.js';
import type { RouteRateLimits } from '../rate-limits/route-rate-limits.js';
import type { RequestOrigin } from './request-origin.js';
import { demandScopes } from './route-scopes.js';
import { checkSessionOrigin } from './session-origin.js';
import { signInInstead } from './sign-in-redirect.js';
import type { RouteTable } from './route-table.js';
import {
  ANY_HOST,
  hostnamesOf,
  proxiedRoute,
  routeOf,
  upstreamPathOf,
  type CompiledRoute,
  type ProxiedRoute,
} from './routes.js';
import { requestView } from './tenant-match.js';
import { originalHosts, originalMethods, originalRequestViews } from './verify-request.js';

/** The rules a verdict reads; a config reload replaces them between requests. */
export interface AdmissionSettings {
  routes: RouteTable<CompiledRoute>;
  headers: HeaderPolicy;
  /** The origin a request is addressed to, for the CSRF rule of session-admitted requests. */
  origin: RequestOrigin;
}

/** What admits: the bearer's check and the routes' buckets, made once at start. */
export interface Admission {
  admit: Admit;
  /** The routes' per-tenant and per-user token buckets. */
  rateLimits: RouteRateLimits;
  /** Read on every request: a reload replaces what it holds. */
  settings: AdmissionSettings;
}

/** Who the request acts for: undefined when anonymous (a public route, no bearer token). */
export type Verdict = Principal | undefined;

/**
 * The hostnames a request is addressed to, when some route names hosts
 * (else {@link ANY_HOST}): its Host and a trusted proxy's `X-Forwarded-Host`.
 * @throws GatewayError `invalid_request` for two Host lines or a malformed host
 */
export function hostsOf(
  settings: AdmissionSettings,
  req: IncomingMessage,
): readonly (string | undefined)[] {
  return settings.routes.byHost ? hostnamesOf(settings.headers.routingHosts(req)) : ANY_HOST;
}

/**
 * The route a request for `path`, addressed to `hosts`, falls under; the
 * entry way names it in the request's scope, then takes it as a proxy target
 * ({@link proxiedRoute}: a forward-auth-only route is refused there).
 * @throws GatewayError `not_found` (with `noRoute` as its message) when none
 *   does; `invalid_request` when the hosts select different routes
 */
export function routeFor(
  settings: AdmissionSettings,
  path: string,
  hosts: readonly (string | undefined)[],
  noRoute: string,
): CompiledRoute {
  const route = routeOf(settings.routes, path, hosts);
  if (route === undefined) throw new GatewayError('not_found', noRoute);
  return route;
}

export { proxiedRoute };

/**
 * The verdict on one request, for every entry way.
 *
 * @param who the request's scope: the principal's ids are written to it as
 *   soon as the token verified
 * @param route the route the request is forwarded under (HTTP, upgrade), from
 *   {@link routeFor}; undefined for forward-auth, whose readings of the
 *   original request each select theirs
 * @param hosts the hosts `route` was selected for ({@link hostsOf})
 * @returns the principal (undefined: anonymous), or a promise of it when the
 *   token, its session or a bucket's first lease is not at hand
 * @throws GatewayError the refusal, from the step that refused (or rejects with it)
 */
export function decide(
  admission: Admission,
  req: IncomingMessage,
  target: NormalisedTarget,
  who: Who,
  route?: ProxiedRoute,
  hosts: readonly (string | undefined)[] = ANY_HOST,
): Verdict | Promise<Verdict> {
  const { routes, headers } = admission.settings;
  headers.checkFraming(req);
  const checks =
    route === undefined
      ? originalRequestChecks(routes, req, target)
      : tenantChecks(routes, requestView(req.rawHeaders, target.path, target.query), route, hosts);
  if (admission.admit.anonymous(req.headers, checks)) return undefined;
  const methods = route === undefined ? originalMethods(req, target.path) : (req.method ?? 'GET');
  let admitted: Principal | Promise<Principal>;
  try {
    admitted = admission.admit(req.headers, checks, who);
  } catch (err) {
    throw signInFirst(admission, req, route, checks, methods, err);
  }
  if (admitted instanceof Promise) {
    return admitted.then(
      (principal) => authorized(admission, req, target, route, checks, methods, principal),
      (err: unknown) => {
        throw signInFirst(admission, req, route, checks, methods, err);
      },
    );
  }
  return authorized(admission, req, target, route, checks, methods, admitted);
}

/**
 * A refusal of admit, or — where the session cookie was read — the redirect
 * to sign in that replaces it for a page load (`sign-in-redirect.ts`);
 * forward-auth (`route` undefined) keeps its 401 and names the sign-in.
 */
function signInFirst(
  admission: Admission,
  req: IncomingMessage,
  route: ProxiedRoute | undefined,
  checks: readonly TenantCheck[],
  methods: string | readonly string[],
  err: unknown,
): unknown {
  const first = checks[0];
  if (first === undefined || !takesSessions(checks)) return err;
  const presented = admission.admit.presents(req.headers);
  return signInInstead(err, req, first.view, methods, presented, route === undefined);
}

/**
 * After admit: for a session, the same-origin rule (forward-auth: of the
 * original request); the scopes each check's route requires for the method
 * (or every original method), then one token from the route's buckets.
 * Forward-auth takes no token from them: the ingress forwards.
 * @throws GatewayError `csrf_refused`, `insufficient_scope`
 */
function authorized(
  admission: Admission,
  req: IncomingMessage,
  target: NormalisedTarget,
  route: ProxiedRoute | undefined,
  checks: readonly TenantCheck[],
  methods: string | readonly string[],
  principal: Principal,
): Principal | Promise<Principal> {
  if (principal.kind === 'session') {
    const own = admission.settings.origin(req, route === undefined ? target.path : undefined);
    checkSessionOrigin(req, methods, own);
  }
  for (const check of checks) {
    const scopes = check.route?.scopes;
    if (scopes === undefined) continue;
    // A gRPC route's scopes are keyed by gRPC method, which is the path (every call is a POST).
    if (check.route?.protocol === 'grpc') demandScopes(scopes, check.view.path, principal.scopes);
    else if (typeof methods === 'string') demandScopes(scopes, methods, principal.scopes);
    else for (const method of methods) demandScopes(scopes, method, principal.scopes);
  }
  const rateLimit = route?.rateLimit;
  return rateLimit === undefined ? principal : limit(admission.rateLimits, rateLimit, principal);
}

/**
 * Forward-auth's checks: every reading of the request the ingress asks about
 * (each path source it sent, each host source), each under the route it
 * falls under (`verify-request.ts` explains why every source counts).
 */
function originalRequestChecks(
  routes: RouteTable<CompiledRoute>,
  req: IncomingMessage,
  target: NormalisedTarget,
): TenantCheck[] {
  const views = originalRequestViews(req, target.path, target.query);
  const hosts = routes.byHost ? hostnamesOf(originalHosts(req, target.path)) : ANY_HOST;
  return views.flatMap((view) =>
    tenantChecks(routes, view, routeOf(routes, view.path, hosts), hosts),
  );
}

/** One token from each of the route's buckets (a WebSocket upgrade is one request too). */
function limit(
  rateLimits: RouteRateLimits,
  rateLimit: RouteRateLimit,
  principal: Principal,
): Principal | Promise<Principal> {
  const waiting = rateLimits.take(rateLimit, principal);
  return waiting === undefined ? principal : waiting.then(() => principal);
}

/**
 * The verdict applied to a request the gateway forwards: every client copy of
 * an identity (and hop-by-hop, forwarding, framing) header stripped, the
 * principal's identity injected, the URL set to what the upstream sees (the
 * route's prefix replaced as configured, the query as sent).
 */
export function rewriteForUpstream(
  headers: HeaderPolicy,
  req: IncomingMessage,
  target: NormalisedTarget,
  route: ProxiedRoute,
  principal: Verdict,
  requestId: string,
  upgrade: boolean,
): void {
  headers.rewrite(req, principal, {
    requestId,
    stripAuthorization: route.stripAuthorization,
    upgrade,
  });
  req.url = urlOf(upstreamPathOf(route, target.path), target.query);
}

/**
 * Forward-auth's 200: the principal's identity headers (empty values when
 * anonymous), and the request's `Authorization` as sent unless it carries an
 * API key or an API key admitted the request. The ingress forwards the
 * original request, so it copies `Authorization` and the API-key header from
 * this answer (issue 42: a key never reaches an upstream): one this answer
 * lacks, it removes (nginx `auth_request_set`, ingress-nginx
 * `auth-response-headers`, Traefik `authResponseHeaders`). The API-key header
 * is never answered. While sessions are on, a request's `Cookie` is answered
 * without the session cookie (issue 44: its value is a secret; '' when
 * nothing is left), for the ingress to forward instead of the client's.
 */
export function verifiedHeaders(
  headers: HeaderPolicy,
  principal: Verdict,
  authorization: string | undefined,
  cookie?: string,
): Record<string, string> {
  const answer: Record<string, string> = {
    ...headers.identityHeaders(principal),
    'cache-control': 'no-store',
    'content-length': '0',
  };
  const upstreamCookie = headers.upstreamCookie(cookie);
  if (upstreamCookie !== undefined) answer.cookie = upstreamCookie;
  if (
    authorization !== undefined &&
    principal?.kind !== 'api_key' &&
    !authorizationCarriesApiKey(authorization)
  )
    answer.authorization = authorization;
  return answer;
}

/** Envoy's ext_authz verdict on the headers of the original request: what to set, what to remove. */
export interface HeaderMutation {
  set: Record<string, string>;
  remove: string[];
}

/**
 * Forward-auth's 200 ({@link verifiedHeaders}) as Envoy's gRPC ext_authz
 * applies it: the identity headers with a value are set (overwriting), and
 * every other header of the request that must never reach an upstream —
 * client copies of identity headers (`-bin` variants too), identity-like
 * ones, the API-key header, `Authorization` when it carried an API key,
 * the session cookie's `Cookie` when nothing else is left — is removed.
 */
export function mutationForEnvoy(
  headers: HeaderPolicy,
  principal: Verdict,
  request: Record<string, string>,
): HeaderMutation {
  const verified = verifiedHeaders(headers, principal, request.authorization, request.cookie);
  const set: Record<string, string> = {};
  const remove = new Set(headers.neverForwarded(Object.keys(request)));
  for (const [name, value] of Object.entries(verified)) {
    const lower = name.toLowerCase();
    if (lower === 'cache-control' || lower === 'content-length') continue;
    if (value === '') remove.add(lower);
    else {
      set[lower] = value;
      remove.delete(lower);
    }
  }
  if (request.authorization !== undefined && set.authorization === undefined)
    remove.add('authorization');
  return { set, remove: [...remove] };
}

/** A path and its query as a request target. */
export function urlOf(path: string, query: string): string {
  return query === '' ? path : `${path}?${query}`;
}
