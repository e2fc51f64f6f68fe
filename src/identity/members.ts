/**
 * An org tenant's members and their roles (`admin` or `member`), once for
 * every front end: the CLI's `member add|remove|role` (the operator) now, the
 * console and the API (a tenant admin) next. Each operation writes the store
 * and records its audit event. A removal or a role change ends the member's
 * tokens for the tenant on every running instance before it resolves: the
 * store gives the membership a new generation and publishes it with the
 * write, and only tokens issued since carry it. A removed or demoted admin's
 * pending invitations to the tenant are revoked with it. The caller has found the org
 * tenant and the user it names, and checked that the actor may manage it.
 */
import type { AuditRecorder } from '../audit/recorder.js';
import { GatewayError } from '../errors.js';
import type { LastAdmin, MemberChangeOptions } from '../store/memberships.js';
import type { MemberRole, Store } from '../store/types.js';
import type { Actor } from './actor.js';

export interface MemberDeps {
  store: Store;
  audit: AuditRecorder;
}

/** A user, as their membership's events name them. */
export interface MemberUser {
  id: string;
  email: string;
}

const subject = (tenantId: string, user: MemberUser) => ({
  tenant_id: tenantId,
  user_id: user.id,
  user_email: user.email,
});

/**
 * Makes `user` a member of `tenantId` with `role` (by default `admin` for
 * the tenant's creator, `member` for anyone else); records `member_added`
 * when the membership began. Idempotent: an existing member given a `role`
 * gets it ({@link changeRole}), else nothing changes.
 * @returns whether the membership began
 */
export async function addMember(
  deps: MemberDeps,
  actor: Actor,
  tenantId: string,
  user: MemberUser,
  role?: MemberRole,
): Promise<boolean> {
  if (await deps.store.memberships.isMember(tenantId, user.id)) {
    if (role !== undefined) await changeRole(deps, actor, tenantId, user, role);
    return false;
  }
  if (!(await deps.store.memberships.addMember(tenantId, user.id, role))) return false;
  await deps.audit.record('member_added', actor.audit, subject(tenantId, user));
  return true;
}

/**
 * Ends `user`'s membership of `tenantId`, for good: adding them back gives it
 * a new generation; records `member_removed` when there was one.
 * @param options `keepAnAdmin`: the store refuses, atomically, to remove the tenant's last admin
 * @returns whether there was one; `'last-admin'` when `keepAnAdmin` refused (nothing changed)
 */
export async function removeMember(
  deps: MemberDeps,
  actor: Actor,
  tenantId: string,
  user: MemberUser,
  options?: MemberChangeOptions,
): Promise<boolean | LastAdmin> {
  const removed = await deps.store.memberships.removeMember(tenantId, user.id, options);
  if (removed !== true) return removed;
  await deps.audit.record('member_removed', actor.audit, subject(tenantId, user));
  await revokeInvitationsBy(deps, actor, tenantId, user);
  return true;
}

/**
 * Gives the member `role`; records `member_role_changed` when it changed.
 * @param options `keepAnAdmin`: the store refuses, atomically, to demote the tenant's last admin
 * @returns whether it changed; `'last-admin'` when `keepAnAdmin` refused (nothing changed)
 * @throws GatewayError `not_found` ({@link notMember}) when `user` is no member
 */
export async function changeRole(
  deps: MemberDeps,
  actor: Actor,
  tenantId: string,
  user: MemberUser,
  role: MemberRole,
  options?: MemberChangeOptions,
): Promise<boolean | LastAdmin> {
  const changed = await deps.store.memberships.setMemberRole(tenantId, user.id, role, options);
  if (changed === null) throw notMember();
  if (changed !== true) return changed;
  await deps.audit.record('member_role_changed', actor.audit, { ...subject(tenantId, user), role });
  if (role !== 'admin') await revokeInvitationsBy(deps, actor, tenantId, user);
  return true;
}

/**
 * Revokes the pending invitations `inviter` sent to the tenant, each
 * recorded `invitation_revoked`: an admin removed or demoted takes back the
 * memberships they offered, or one sent to an address of their own just
 * before would let them back in (as admin) after the change.
 */
async function revokeInvitationsBy(
  deps: MemberDeps,
  actor: Actor,
  tenantId: string,
  inviter: MemberUser,
): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  for (const invitation of await deps.store.invitations.listInvitations(tenantId, now)) {
    if (invitation.invitedBy !== inviter.email) continue;
    const revoked = await deps.store.invitations.removeInvitation(tenantId, invitation.id);
    if (revoked === null) continue;
    await deps.audit.record('invitation_revoked', actor.audit, {
      tenant_id: tenantId,
      user_email: revoked.email,
      invitation_id: revoked.id,
      role: revoked.role,
    });
  }
}

export function notMember(): GatewayError {
  return new GatewayError('not_found', 'The user is not a member of the tenant.');
}
