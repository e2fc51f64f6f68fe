/**
 * The tenant admins' e-mail domains (`/1/tenants/:tenant_id/domains`, issue
 * 42): list them, claim one (a DNS TXT challenge to publish), verify it (the
 * record looked up through `sso.dnsServers`), remove one. The caller is an
 * admin of the tenant (`tenant-admins.ts`), an org tenant's only. What a
 * claim and a verification check is `auth/tenant-domains.ts`, the CLI's too
 * (`cli/domains.ts`).
 */
import type { Router } from '@koa/router';
import {
  checkDomain,
  claimDomain,
  domainClaimSchema,
  domainView,
  noDomain,
  verifyDomain,
} from '../../auth/tenant-domains.js';
import { readJsonBody } from '../request-input.js';
import type { ApiContext, ApiState } from '../state.js';
import { actor, noStore } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';
import { tenantAdmin, type TenantAdmin } from './tenant-admins.js';

const DOMAINS = '/tenants/:tenant_id/domains';
const DOMAIN = `${DOMAINS}/:domain`;

const nowSeconds = () => Math.floor(Date.now() / 1000);

export function addDomainRoutes(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  router.get(DOMAINS, async (ctx) => {
    const { tenantId } = await domainAdmin(deps, ctx);
    noStore(ctx);
    ctx.body = { domains: (await deps.store.domains.listTenantDomains(tenantId)).map(domainView) };
  });
  router.post(DOMAINS, (ctx) => claim(deps, ctx));
  router.post(`${DOMAIN}/verify`, (ctx) => verify(deps, ctx));
  router.delete(DOMAIN, (ctx) => remove(deps, ctx));
}

function domainAdmin(deps: IdentityRouterDeps, ctx: ApiContext): Promise<TenantAdmin> {
  return tenantAdmin(deps, ctx, {
    what: 'its domains',
    orgOnly: 'E-mail domains belong to org tenants only.',
  });
}

async function claim(deps: IdentityRouterDeps, ctx: ApiContext): Promise<void> {
  const admin = await domainAdmin(deps, ctx);
  const { domain } = await readJsonBody(ctx, domainClaimSchema, deps.bodyLimit);
  const { record, created } = await claimDomain(deps.store, admin.tenantId, domain, {
    now: nowSeconds(),
  });
  if (created) {
    await deps.audit.record('domain_added', actor(deps, ctx, admin.principal.email), {
      tenant_id: admin.tenantId,
      domain,
    });
  }
  noStore(ctx);
  ctx.status = created ? 201 : 200;
  ctx.body = domainView(record);
}

async function verify(deps: IdentityRouterDeps, ctx: ApiContext): Promise<void> {
  const admin = await domainAdmin(deps, ctx);
  const domain = checkDomain(ctx.params.domain as string);
  const record = await verifyDomain(deps, admin.tenantId, domain, nowSeconds());
  await deps.audit.record('domain_verified', actor(deps, ctx, admin.principal.email), {
    tenant_id: admin.tenantId,
    domain,
  });
  noStore(ctx);
  ctx.body = domainView(record);
}

async function remove(deps: IdentityRouterDeps, ctx: ApiContext): Promise<void> {
  const admin = await domainAdmin(deps, ctx);
  const domain = checkDomain(ctx.params.domain as string);
  if (!(await deps.store.domains.removeTenantDomain(admin.tenantId, domain))) throw noDomain();
  await deps.audit.record('domain_removed', actor(deps, ctx, admin.principal.email), {
    tenant_id: admin.tenantId,
    domain,
  });
  ctx.status = 204;
}
