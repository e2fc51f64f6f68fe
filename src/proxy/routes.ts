/** Routes from config, compiled once: prefix table and tenant rules. */
import type { RouteConfig } from '../config/index.js';
import type { TenantCheck } from './admit.js';
import { createRouteTable, type RouteTable } from './route-table.js';
import { compileTenantRules, type RequestView, type TenantRule } from './tenant-match.js';

export interface CompiledRoute {
  prefix: string;
  upstream: string;
  timeoutMs: number;
  stripAuthorization: boolean;
  /** @throws GatewayError `tenant_mismatch` */
  checkTenant: TenantRule;
}

export function compileRoutes(routes: readonly RouteConfig[]): RouteTable<CompiledRoute> {
  return createRouteTable(
    routes.map((r) => ({
      prefix: r.prefix,
      upstream: r.upstream,
      timeoutMs: r.timeoutMs,
      stripAuthorization: r.stripAuthorization,
      checkTenant: compileTenantRules(r.tenant),
    })),
  );
}

/**
 * The tenant checks one reading of a request must pass: the rules of the
 * route it is forwarded under (`route`; none: the token only), and those of
 * the route a permissive upstream would read its path as under (`/ORDERS/…`
 * falling to a catch-all is still under `/orders`'s rules).
 */
export function tenantChecks(
  routes: RouteTable<CompiledRoute>,
  view: RequestView,
  route: CompiledRoute | undefined,
): TenantCheck[] {
  const lenient = routes.matchLenient(view.path);
  return lenient === undefined || lenient === route
    ? [{ view, route }]
    : [
        { view, route },
        { view, route: lenient },
      ];
}
