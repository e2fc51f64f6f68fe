/** Routes from config, compiled once: prefix table and tenant rules. */
import type { RouteConfig } from '../config/index.js';
import { createRouteTable, type RouteTable } from './route-table.js';
import { compileTenantRules, type TenantRule } from './tenant-match.js';

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
