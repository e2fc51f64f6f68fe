/**
 * The admission decision for proxied traffic, forward-auth and WebSocket
 * upgrades alike: authenticate the bearer, then match the tenant. One
 * function, so the three can never give different verdicts.
 */
import type { Authenticate, Principal } from '../auth/authenticate.js';
import type { CompiledRoute } from './routes.js';
import type { RequestView } from './tenant-match.js';

/** One reading of a request and the route it falls under (none: token only). */
export interface TenantCheck {
  view: RequestView;
  route: CompiledRoute | undefined;
}

/**
 * Admits when the bearer is good and every check names only the token's
 * tenant. Synchronous when `authenticate` is (a cached token): it may throw,
 * or return a promise that rejects.
 */
export type Admit = (
  authorization: string | undefined,
  checks: readonly TenantCheck[],
) => Principal | Promise<Principal>;

export function createAdmit(authenticate: Authenticate): Admit {
  return (authorization, checks) => {
    const authenticated = authenticate(authorization);
    return authenticated instanceof Promise
      ? authenticated.then((principal) => matchTenant(principal, checks))
      : matchTenant(authenticated, checks);
  };
}

function matchTenant(principal: Principal, checks: readonly TenantCheck[]): Principal {
  for (const { view, route } of checks) {
    route?.checkTenant(view, principal.tenantId);
  }
  return principal;
}
