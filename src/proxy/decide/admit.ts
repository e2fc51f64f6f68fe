/**
 * The admission decision for proxied traffic, forward-auth and WebSocket
 * upgrades alike: authenticate the bearer (or API key; on a session route the
 * session cookie when neither is sent), then the route's tenant types and
 * tenant rules. One function, so the three can never give different verdicts.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Principal, PrincipalKind } from '../../auth/credentials/authenticate.js';
import { presentsCredential } from '../../auth/credentials/read-credential.js';
import type { AuthenticateRequest } from '../../auth/credentials/request-credentials.js';
import type { AuthenticateSessionRequest } from '../../auth/credentials/session-credentials.js';
import { GatewayError } from '../../errors.js';
import { ANY_HOST, type CompiledRoute } from './routes.js';
import type { RouteTable } from './route-table.js';
import type { RequestView } from './tenant-match.js';

/** One reading of a request and the route it falls under (none: token only). */
export interface TenantCheck {
  view: RequestView;
  route: CompiledRoute | undefined;
}

/**
 * The tenant checks one reading of a request must pass: the rules of the
 * route it is forwarded under (`route`; none: the token only), and those of
 * the route a permissive upstream would read its path as under (`/ORDERS/…`
 * falling to a catch-all is still under `/orders`'s rules), for each host.
 */
export function tenantChecks(
  routes: RouteTable<CompiledRoute>,
  view: RequestView,
  route: CompiledRoute | undefined,
  hosts: readonly (string | undefined)[] = ANY_HOST,
): TenantCheck[] {
  const checks: TenantCheck[] = [{ view, route }];
  for (const host of hosts) {
    const lenient = routes.matchLenient(view.path, host);
    if (lenient !== undefined && !checks.some((check) => check.route === lenient))
      checks.push({ view, route: lenient });
  }
  return checks;
}

/**
 * Who a request acts for, written as soon as its token is verified: a
 * refusal after that (tenant types, tenant rules, a rate limit) is logged
 * with them. The request's scope is one.
 */
export interface Who {
  userId?: string | undefined;
  tenantId?: string | undefined;
  /** The principal's kind: the request counter's `principal` label. */
  kind?: PrincipalKind | undefined;
}

/**
 * Admits when the credential (bearer token, or API key where they are on)
 * is good and every check names only its tenant. Synchronous when
 * `authenticate` is (a cached credential): it may throw, or return a promise
 * that rejects. The principal goes to `who` before the tenant checks run.
 */
export interface Admit {
  (
    headers: IncomingHttpHeaders,
    checks: readonly TenantCheck[],
    who: Who,
  ): Principal | Promise<Principal>;
  /** {@link anonymousAllowed}, the API-key header read where keys are on. */
  anonymous(headers: IncomingHttpHeaders, checks: readonly TenantCheck[]): boolean;
  /** Whether the request sends a bearer token or an API key (a session cookie aside). */
  presents(headers: IncomingHttpHeaders): boolean;
}

/**
 * @param apiKeyHeader the header an API key may come in (`apiKeys.header`),
 *   undefined while keys are off: it is then not read
 * @param sessions what session routes take (the session cookie besides),
 *   while `sessions.enabled`; undefined: no cookie is ever read
 */
export function createAdmit(
  authenticate: AuthenticateRequest,
  apiKeyHeader: string | undefined,
  sessions?: AuthenticateSessionRequest,
): Admit {
  const keyHeader = apiKeyHeader?.toLowerCase();
  const apiKeyOf = (headers: IncomingHttpHeaders) =>
    keyHeader === undefined ? undefined : (headers[keyHeader] as string | undefined);
  const admit = (headers: IncomingHttpHeaders, checks: readonly TenantCheck[], who: Who) => {
    const authenticated =
      sessions !== undefined && takesSessions(checks)
        ? sessions(headers.authorization, apiKeyOf(headers), headers.cookie)
        : authenticate(headers.authorization, apiKeyOf(headers));
    return authenticated instanceof Promise
      ? authenticated.then((principal) => matchTenant(principal, checks, who))
      : matchTenant(authenticated, checks, who);
  };
  return Object.assign(admit, {
    anonymous: (headers: IncomingHttpHeaders, checks: readonly TenantCheck[]) =>
      anonymousAllowed(headers.authorization, checks, apiKeyOf(headers)),
    presents: (headers: IncomingHttpHeaders) =>
      presentsCredential(headers.authorization, apiKeyOf(headers)),
  });
}

/**
 * Whether a session cookie may admit: every reading's route takes sessions
 * (`auth: session`) or is public, and one takes them. A reading a permissive
 * upstream would take as a bearer-only route's path (or one under no route)
 * needs a bearer: a cookie never reaches further than the routes that take it.
 */
export function takesSessions(checks: readonly TenantCheck[]): boolean {
  let session = false;
  for (const { route } of checks) {
    if (route?.auth === 'session') session = true;
    else if (route?.auth !== 'none') return false;
  }
  return session;
}

function matchTenant(principal: Principal, checks: readonly TenantCheck[], who: Who): Principal {
  who.userId = principal.userId;
  who.tenantId = principal.tenantId;
  who.kind = principal.kind;
  for (const { view, route } of checks) {
    if (route === undefined) continue;
    if (route.tenantTypes !== undefined && !route.tenantTypes.has(principal.tenantType)) {
      throw new GatewayError(
        'forbidden',
        `This route admits only ${[...route.tenantTypes].join(', ')} tenants.`,
      );
    }
    route.checkTenant(view, principal.tenantId);
  }
  return principal;
}

/**
 * A request may go on without identity when it presents no credential of the
 * gateway's (`credentials/read-credential.ts`: no bearer token in any
 * spelling, no API key) and every reading of it falls under a public route
 * (`auth: none`): a reading a permissive upstream would take as a protected
 * route's path, or one under no route at all, needs the credential. Another
 * scheme (`Basic` for the upstream's own use) is not the gateway's: it passes
 * through untouched.
 * @param apiKey the API-key header's value where keys are on
 */
export function anonymousAllowed(
  authorization: string | undefined,
  checks: readonly TenantCheck[],
  apiKey?: string,
): boolean {
  if (presentsCredential(authorization, apiKey)) return false;
  return checks.length > 0 && checks.every((check) => check.route?.auth === 'none');
}
