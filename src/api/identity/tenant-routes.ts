/** `GET /1/users/:user_id/tenants` (the user's tenants) and `GET /1/tenants/:tenant_id` (the token's tenant). */
import type { Router } from '@koa/router';
import { GatewayError } from '../../errors.js';
import { tenantList, tenantRecord } from '../representations.js';
import type { ApiState } from '../state.js';
import { bearer, noStore, pathUser } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';

export function addUserTenantsRoute(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  router.get('/users/:user_id/tenants', async (ctx) => {
    const user = await pathUser(deps, ctx, ctx.params.user_id as string);
    const tenants = await deps.store.memberships.listUserTenants(user.id);
    noStore(ctx);
    ctx.body = tenantList(tenants);
  });
}

export function addTenantRoute(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  router.get('/tenants/:tenant_id', async (ctx) => {
    const principal = await bearer(deps, ctx);
    const tenantId = ctx.params.tenant_id as string;
    if (tenantId !== 'current' && tenantId !== principal.tenantId) {
      throw new GatewayError('tenant_mismatch', "The path names a tenant other than the token's.", {
        detail: tenantId,
      });
    }
    const tenant = await deps.store.tenants.getTenant(principal.tenantId);
    if (tenant === null) throw new GatewayError('not_found', 'The tenant no longer exists.');
    noStore(ctx);
    ctx.body = tenantRecord(tenant);
  });
}
