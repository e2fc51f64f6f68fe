/**
 * Who the caller is, for a front end (the console; an app's own page): the
 * user, the tenant their session or token is for with their role there and
 * its scopes, and every tenant they belong to with their role — read from the
 * store now, so a role changed a moment ago shows as it is.
 */
import { GatewayError } from '../errors.js';
import type { MemberRole, Store, TenantType } from '../store/types.js';

export interface TenantOfUser {
  tenantId: string;
  type: TenantType;
  name: string;
  role: MemberRole;
}

export interface CurrentUser {
  userId: string;
  email: string;
  tenantId: string;
  tenantName: string;
  tenantType: TenantType;
  role: MemberRole;
  scopes: readonly string[];
  tenants: TenantOfUser[];
}

/** The caller as their session or token names them (a user, never a machine client). */
export interface UserCaller {
  userId: string;
  email: string;
  tenantId: string;
  scopes: readonly string[];
}

export async function currentUser(store: Store, caller: UserCaller): Promise<CurrentUser> {
  const records = await store.memberships.listUserTenants(caller.userId);
  const tenants = await Promise.all(
    records.map(async (tenant) => ({
      tenantId: tenant.tenantId,
      type: tenant.type,
      name: tenant.name,
      role: (await store.memberships.getMemberRole(tenant.tenantId, caller.userId)) ?? 'member',
    })),
  );
  const here = tenants.find((t) => t.tenantId === caller.tenantId);
  // The session or token was judged alive a moment ago: a membership gone since is a race the next request settles.
  if (here === undefined) throw new GatewayError('invalid_token', 'The membership has ended.');
  return {
    userId: caller.userId,
    email: caller.email,
    tenantId: here.tenantId,
    tenantName: here.name,
    tenantType: here.type,
    role: here.role,
    scopes: caller.scopes,
    tenants,
  };
}
