/**
 * Who may manage an org tenant's machine clients (`client-routes.ts`) and its
 * identity provider (`idp-routes.ts`): a user whose bearer token is for the
 * tenant and whose role there is `admin` *now* (read from the store on every
 * request, so a demotion takes effect at once). A machine client's token
 * never manages anything, whatever its scopes; a personal tenant's path is
 * refused (403 `forbidden`).
 */
import type { TokenPrincipal } from '../../auth/credentials/authenticate.js';
import type { SessionPrincipal } from '../../auth/sessions/browser-sessions.js';
import { GatewayError } from '../../errors.js';
import type { MemberActor } from '../../identity/actor.js';
import type { ApiContext } from '../state.js';
import { actor, sessionOrBearer } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';

/** An admin of the path's tenant, by their token for it. */
export interface TenantAdmin {
  /** A user's (never a machine client's). */
  principal: TokenPrincipal | SessionPrincipal;
  tenantId: string;
  /** Who performs the identity operations the request calls (`identity/actor.ts`). */
  actor: MemberActor;
}

/** What is managed, for the refusals' text. */
export interface Managed {
  /** "its clients" */
  what: string;
  /** Why a personal tenant is refused: "Machine clients belong to org tenants only." */
  orgOnly: string;
}

/**
 * The caller, when they may manage the path's tenant's `managed`.
 * @throws `invalid_token` (401), `tenant_mismatch`, `forbidden` (403), `not_found`
 */
export async function tenantAdmin(
  deps: IdentityRouterDeps,
  ctx: ApiContext,
  managed: Managed,
): Promise<TenantAdmin> {
  const principal = await sessionOrBearer(deps, ctx);
  if (principal.kind === 'client') {
    throw new GatewayError('forbidden', `Only a tenant's admins (users) manage ${managed.what}.`);
  }
  const inPath = ctx.params.tenant_id as string;
  if (inPath !== 'current' && inPath !== principal.tenantId) {
    throw new GatewayError('tenant_mismatch', "The path names a tenant other than the token's.", {
      detail: inPath,
    });
  }
  const tenantId = principal.tenantId;
  const tenant = await deps.store.tenants.getTenant(tenantId);
  if (tenant === null) throw new GatewayError('not_found', 'The tenant no longer exists.');
  if (tenant.type !== 'orgtenant') throw new GatewayError('forbidden', managed.orgOnly);
  if ((await deps.store.memberships.getMemberRole(tenantId, principal.userId)) !== 'admin') {
    throw new GatewayError('forbidden', `Only the tenant's admins manage ${managed.what}.`);
  }
  const audit = actor(deps, ctx, principal.email);
  return { principal, tenantId, actor: { kind: 'member', role: 'admin', audit } };
}
