/**
 * The tenant admins' e-mail domains (`/1/tenants/:tenant_id/domains`, issue
 * 42): list them, claim one (a DNS TXT challenge to publish), verify it (the
 * record looked up through `sso.dnsServers`), remove one. The caller is an
 * admin of the tenant (`tenant-admins.ts`), an org tenant's only. Claiming,
 * verifying and removing are identity operations (`identity/domains.ts`), the
 * CLI's too (`cli/domains.ts`).
 */
import type { Router } from '@koa/router';
import { checkDomain } from '../../auth/federation/tenant-domains.js';
import { addDomain, removeDomain, verifyDomain } from '../../identity/domains.js';
import { domainList, domainView } from '../representations.js';
import { readJsonBody } from '../request-input.js';
import { TenantDomainClaim } from '../schemas/domains.js';
import type { ApiContext, ApiState } from '../state.js';
import { noStore } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';
import { tenantAdmin, type TenantAdmin } from './tenant-admins.js';

const DOMAINS = '/tenants/:tenant_id/domains';
const DOMAIN = `${DOMAINS}/:domain`;

export function addDomainRoutes(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  router.get(DOMAINS, async (ctx) => {
    const { tenantId } = await domainAdmin(deps, ctx);
    noStore(ctx);
    ctx.body = domainList(await deps.store.domains.listTenantDomains(tenantId));
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
  const { domain } = await readJsonBody(ctx, TenantDomainClaim, deps.bodyLimit);
  const { record, created } = await addDomain(deps, admin.actor, admin.tenantId, domain);
  noStore(ctx);
  ctx.status = created ? 201 : 200;
  ctx.body = domainView(record);
}

async function verify(deps: IdentityRouterDeps, ctx: ApiContext): Promise<void> {
  const admin = await domainAdmin(deps, ctx);
  const domain = checkDomain(ctx.params.domain as string);
  const record = await verifyDomain(deps, admin.actor, admin.tenantId, domain);
  noStore(ctx);
  ctx.body = domainView(record);
}

async function remove(deps: IdentityRouterDeps, ctx: ApiContext): Promise<void> {
  const admin = await domainAdmin(deps, ctx);
  const domain = checkDomain(ctx.params.domain as string);
  await removeDomain(deps, admin.actor, admin.tenantId, domain);
  ctx.status = 204;
}
