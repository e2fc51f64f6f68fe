/**
 * The tenant admins' identity provider (`/1/tenants/:tenant_id/idp`, issue
 * 34): read it, set it whole (PUT), remove it. The caller is an admin of the
 * tenant (`tenant-admins.ts`); only org tenants have one, so a personal
 * tenant's path is 403 `forbidden` (its only member is its user: there is no
 * one to sign in for it).
 *
 * The client secret is write-only: PUT may send it (sealed before it is
 * stored, `auth/tenant-idps.ts`), no answer ever holds it, only
 * `client_secret_set`. The checks and the record are the CLI's too
 * (`cli/idps.ts`).
 */
import type { Router } from '@koa/router';
import { idpSettingsSchema, idpView, setTenantIdp } from '../../auth/tenant-idps.js';
import { GatewayError } from '../../errors.js';
import { readJsonBody } from '../request-input.js';
import type { ApiContext, ApiState } from '../state.js';
import { actor, noStore } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';
import { tenantAdmin, type TenantAdmin } from './tenant-admins.js';

const IDP = '/tenants/:tenant_id/idp';

export function addIdpRoutes(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  router.get(IDP, async (ctx) => {
    const { tenantId } = await idpAdmin(deps, ctx);
    const idp = await deps.store.idps.getTenantIdp(tenantId);
    if (idp === null) throw noIdp();
    noStore(ctx);
    ctx.body = idpView(idp);
  });
  router.put(IDP, (ctx) => putIdp(deps, ctx));
  router.delete(IDP, (ctx) => removeIdp(deps, ctx));
}

function idpAdmin(deps: IdentityRouterDeps, ctx: ApiContext): Promise<TenantAdmin> {
  return tenantAdmin(deps, ctx, {
    what: 'its identity provider',
    orgOnly: 'Identity providers belong to org tenants only.',
  });
}

async function putIdp(deps: IdentityRouterDeps, ctx: ApiContext): Promise<void> {
  const admin = await idpAdmin(deps, ctx);
  const settings = await readJsonBody(ctx, idpSettingsSchema, deps.bodyLimit);
  const { idp, replaced } = await setTenantIdp(
    {
      store: deps.store,
      sealer: deps.idpSecrets,
      allowPrivateIssuers: deps.allowPrivateIssuers === true,
    },
    admin.tenantId,
    settings,
    Math.floor(Date.now() / 1000),
  );
  await deps.audit.record('idp_set', actor(deps, ctx, admin.principal.email), {
    tenant_id: admin.tenantId,
    issuer: idp.issuer,
    idp_client_id: idp.clientId,
  });
  noStore(ctx);
  ctx.status = replaced ? 200 : 201;
  ctx.body = idpView(idp);
}

async function removeIdp(deps: IdentityRouterDeps, ctx: ApiContext): Promise<void> {
  const admin = await idpAdmin(deps, ctx);
  const idp = await deps.store.idps.getTenantIdp(admin.tenantId);
  if (idp === null || !(await deps.store.idps.removeTenantIdp(admin.tenantId))) throw noIdp();
  await deps.audit.record('idp_removed', actor(deps, ctx, admin.principal.email), {
    tenant_id: admin.tenantId,
    issuer: idp.issuer,
  });
  ctx.status = 204;
}

function noIdp(): GatewayError {
  return new GatewayError('not_found', 'The tenant has no identity provider.');
}
