/**
 * Who may manage an org tenant's machine clients (`client-routes.ts`), its
 * identity provider (`idp-routes.ts`), domains, members and invitations: a
 * user whose bearer token or browser session is for the tenant and whose
 * role there is `admin` *now* (read from the store on every request, so a
 * demotion takes effect at once). The credential is read by
 * `sessionOrBearer` (`callers.ts`): with the session cookie, an unsafe method
 * must come from the gateway's own origin (403 `csrf_refused`). A machine
 * client's token never manages anything, whatever its scopes; a personal
 * tenant's path is refused (403 `forbidden`).
 */
import { GatewayError } from '../../errors.js';
import type { MemberActor } from '../../identity/actor.js';
import type { ApiContext } from '../state.js';
import { actor, sessionOrBearer, type SessionOrBearerCaller } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';

/** An admin of the path's tenant, by their token or session for it. */
export interface TenantAdmin {
  /** A user's token or session (never a machine client's). */
  principal: Exclude<SessionOrBearerCaller, { kind: 'client' }>;
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
 * @throws `invalid_token` (401), `tenant_mismatch`, `forbidden`, `csrf_refused` (403), `not_found`
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
