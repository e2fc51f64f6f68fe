/**
 * Whether a user may act for a tenant, and under which membership: the
 * check a token grant (`accounts.ts`) and a browser session's start
 * (`sessions/session-service.ts`) share, so the two cannot differ.
 */
import { GatewayError } from '../errors.js';
import type { MemberRole, Membership, Store, TenantRecord } from '../store/types.js';

/** A member's standing in a tenant, as a token or a session is begun under it. */
export interface MemberAccess {
  tenant: TenantRecord;
  membership: Membership;
  role: MemberRole;
}

/**
 * The tenant, the membership (its generation) and the role.
 * @throws GatewayError `tenant_access_denied` when the tenant does not exist
 *   or the user is not a member
 */
export async function memberAccess(
  store: Pick<Store, 'tenants' | 'memberships'>,
  tenantId: string,
  userId: string,
): Promise<MemberAccess> {
  const [tenant, membership] = await Promise.all([
    store.tenants.getTenant(tenantId),
    store.memberships.membershipForToken(tenantId, userId),
  ]);
  // The role is read after the generation: a role change in between takes a
  // newer generation, so a token carrying the old role's scopes is refused.
  const role = membership === null ? null : await store.memberships.getMemberRole(tenantId, userId);
  if (tenant === null || membership === null || role === null) {
    throw new GatewayError('tenant_access_denied', 'The user may not act for this tenant.', {
      detail: tenantId,
    });
  }
  return { tenant, membership, role };
}
