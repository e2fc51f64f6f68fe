/**
 * The tenant admins' identity provider (`/1/tenants/:tenant_id/idp`, issue
 * 34): read it, set it whole (PUT), remove it. The caller is an admin of the
 * tenant (`tenant-admins.ts`); only org tenants have one, so a personal
 * tenant's path is 403 `forbidden` (its only member is its user: there is no
 * one to sign in for it).
 *
 * The client secret is write-only: PUT may send it (sealed before it is
 * stored, `auth/federation/tenant-idps.ts`), no answer ever holds it, only
 * `client_secret_set`. Setting and removing it are identity operations
 * (`identity/idps.ts`), the CLI's too (`cli/idps.ts`).
 */
import type { Router } from '@koa/router';
import { noIdp, removeIdp, setIdp, type IdpDeps } from '../../identity/idps.js';
import { idpView } from '../representations.js';
import { readJsonBody } from '../request-input.js';
import { TenantIdpSettings } from '../schemas/idps.js';
import type { ApiContext, ApiState } from '../state.js';
import { noStore } from './callers.js';
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
  router.delete(IDP, (ctx) => removeIdpRoute(deps, ctx));
}

function idpAdmin(deps: IdentityRouterDeps, ctx: ApiContext): Promise<TenantAdmin> {
  return tenantAdmin(deps, ctx, {
    what: 'its identity provider',
    orgOnly: 'Identity providers belong to org tenants only.',
  });
}

/** The identity operations' part of the router's deps. */
function idpDeps(deps: IdentityRouterDeps): IdpDeps {
  return {
    store: deps.store,
    audit: deps.audit,
    sealer: deps.idpSecrets,
    allowPrivateIssuers: deps.allowPrivateIssuers === true,
  };
}

async function putIdp(deps: IdentityRouterDeps, ctx: ApiContext): Promise<void> {
  const admin = await idpAdmin(deps, ctx);
  const settings = await readJsonBody(ctx, TenantIdpSettings, deps.bodyLimit);
  const { idp, replaced } = await setIdp(idpDeps(deps), admin.actor, admin.tenantId, settings);
  noStore(ctx);
  ctx.status = replaced ? 200 : 201;
  ctx.body = idpView(idp);
}

async function removeIdpRoute(deps: IdentityRouterDeps, ctx: ApiContext): Promise<void> {
  const admin = await idpAdmin(deps, ctx);
  await removeIdp(deps, admin.actor, admin.tenantId);
  ctx.status = 204;
}
