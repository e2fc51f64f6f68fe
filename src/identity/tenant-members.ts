/**
 * An org tenant's members as its admins manage them (issue 45): list them,
 * change a role, remove one — for every front end of a tenant admin (the
 * identity API now, the console next). The writes are `members.ts`'s (the
 * CLI's too), called, never copied: each ends the member's tokens and
 * sessions for the tenant on every instance before it resolves. The rules a
 * tenant admin adds to them:
 *
 * - A user who is not a member of this tenant is `not_found`, whether they
 *   exist or belong to another tenant (no existence oracle).
 * - The tenant keeps an admin: the last one can be neither demoted nor
 *   removed (403 `forbidden`); make another member admin first. The store
 *   checks it in the same atomic step as the write (`keepAnAdmin`), so two
 *   admins demoting or removing each other at once cannot both succeed.
 */
import { GatewayError } from '../errors.js';
import { LAST_ADMIN } from '../store/memberships.js';
import type { MemberRole } from '../store/types.js';
import type { MemberActor } from './actor.js';
import {
  changeRole,
  notMember,
  removeMember,
  type MemberDeps,
  type MemberUser,
} from './members.js';

/** One member as a tenant's admins see them. */
export interface TenantMember {
  userId: string;
  email: string;
  role: MemberRole;
  /** Unix seconds; null for a membership made before the store kept it. */
  joinedAt: number | null;
  /** The user was created by this tenant's identity provider (at their first sign-in). */
  federated: boolean;
}

/** The tenant's members, by user id. */
export async function listTenantMembers(
  deps: MemberDeps,
  tenantId: string,
): Promise<TenantMember[]> {
  const entries = await deps.store.memberships.listMemberships(tenantId);
  const members = await Promise.all(
    entries.map(async (entry): Promise<TenantMember | null> => {
      const user = await deps.store.users.getUser(entry.userId);
      if (user === null) return null;
      return {
        userId: user.id,
        email: user.email,
        role: entry.role,
        joinedAt: entry.joinedAt,
        federated: user.createdByIdp?.tenantId === tenantId,
      };
    }),
  );
  return members.filter((m) => m !== null);
}

/**
 * Gives a member of the tenant `role` (ending their tokens and sessions for
 * it when it changed).
 * @returns the member as they are now
 * @throws GatewayError `not_found` (no member of this tenant), `forbidden` (the last admin)
 */
export async function setTenantMemberRole(
  deps: MemberDeps,
  actor: MemberActor,
  tenantId: string,
  userId: string,
  role: MemberRole,
): Promise<TenantMember> {
  const user = await memberOf(deps, tenantId, userId);
  if ((await changeRole(deps, actor, tenantId, user, role, KEEP)) === LAST_ADMIN) {
    throw lastAdmin('demoted');
  }
  const member = (await listTenantMembers(deps, tenantId)).find((m) => m.userId === user.id);
  if (member === undefined) throw notMember();
  return member;
}

/**
 * Ends a member's membership of the tenant (and with it their tokens and
 * sessions for it, everywhere).
 * @throws GatewayError `not_found` (no member of this tenant), `forbidden` (the last admin)
 */
export async function removeTenantMember(
  deps: MemberDeps,
  actor: MemberActor,
  tenantId: string,
  userId: string,
): Promise<void> {
  const user = await memberOf(deps, tenantId, userId);
  const removed = await removeMember(deps, actor, tenantId, user, KEEP);
  if (removed === LAST_ADMIN) throw lastAdmin('removed');
  if (!removed) throw notMember();
}

/** The user `userId` names when a member of the tenant; else `not_found`, as for nobody. */
async function memberOf(deps: MemberDeps, tenantId: string, userId: string): Promise<MemberUser> {
  if (!(await deps.store.memberships.isMember(tenantId, userId))) throw notMember();
  const user = await deps.store.users.getUser(userId);
  if (user === null) throw notMember();
  return { id: user.id, email: user.email };
}

/** The store refuses, in the write's own atomic step, a change that leaves the tenant without an admin. */
const KEEP = { keepAnAdmin: true } as const;

/** The refusal of a change the store refused to keep an admin. */
function lastAdmin(change: 'demoted' | 'removed'): GatewayError {
  return new GatewayError(
    'forbidden',
    `The tenant's last admin cannot be ${change}: make another member admin first.`,
  );
}
