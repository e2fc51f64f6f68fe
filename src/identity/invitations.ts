/**
 * Invitations to an org tenant (issue 45), once for every front end (the
 * identity API now, the console next): an admin invites an address with a
 * role and the invitee gets a mailed one-time link; the admins list and
 * revoke the pending ones; the invitee accepts signed in with that address,
 * verified, or — with no account yet — chooses a password through the link
 * (the account is created verified: following the link proved the mailbox;
 * the admin's invitation is the permission, even with `signup.enabled`
 * false). Taking an invitation is atomic: of two concurrent accepts one wins.
 * Each operation records its audit event; the membership's own are
 * `members.ts`'s.
 */
import type { UserRecord, InvitationRecord, MemberRole, TenantRecord } from '../store/types.js';
import { randomBytes } from 'node:crypto';
import { checkEmail } from '../auth/accounts.js';
import {
  isOneTimeTokenShape,
  newOneTimeToken,
  oneTimeTokenDigest,
} from '../auth/one-time-tokens.js';
import { GatewayError } from '../errors.js';
import { invitationMail } from '../mail/invitation-mail.js';
import type { Mailer } from '../mail/mailer.js';
import type { Actor, MemberActor } from './actor.js';
import { addMember, type MemberDeps } from './members.js';
import { createUser, type UserDeps } from './users.js';

/** How long a mailed invitation link is good: 7 days. */
export const INVITATION_TTL_SECONDS = 7 * 24 * 3600;
/** The most pending invitations a tenant holds (a bound on what its admins can make the gateway mail). */
export const MAX_PENDING_INVITATIONS = 100;

export interface InvitationDeps extends MemberDeps, UserDeps {
  /** Undefined without `mail`: nobody can be invited. */
  mailer?: Mailer | undefined;
  /** `publicUrl`: the mailed link's origin (set whenever `mail` is). */
  publicUrl?: string | undefined;
  now?: () => number;
}

const nowOf = (deps: InvitationDeps) => deps.now?.() ?? Math.floor(Date.now() / 1000);

/**
 * Invites `email` into the org tenant with `role` and mails the link. A
 * pending invitation of the same address is replaced (its link stops working).
 * @throws GatewayError `invalid_request` (no `mail`, a bad address, the tenant
 * full of pending invitations), `user_exists` (a member already)
 */
export async function createInvitation(
  deps: InvitationDeps,
  actor: MemberActor,
  tenant: TenantRecord,
  input: { email: string; role: MemberRole },
): Promise<InvitationRecord> {
  const { mailer, publicUrl } = deps;
  if (mailer === undefined || publicUrl === undefined) {
    throw new GatewayError(
      'invalid_request',
      'Invitations are mailed, and this gateway has no `mail` configured: ask its operator.',
    );
  }
  const email = checkEmail(input.email);
  const existing = await deps.store.users.findUserByEmail(email);
  if (existing !== null && (await deps.store.memberships.isMember(tenant.tenantId, existing.id))) {
    throw new GatewayError('user_exists', 'This address is a member of the tenant already.');
  }
  await replacePending(deps, tenant.tenantId, email);
  const { token, digest } = newOneTimeToken();
  const now = nowOf(deps);
  const record: InvitationRecord = {
    id: `inv_${randomBytes(16).toString('base64url')}`,
    tenantId: tenant.tenantId,
    email,
    role: input.role,
    createdAt: now,
    expiresAt: now + INVITATION_TTL_SECONDS,
    invitedBy: actor.audit.actor,
    tokenDigest: digest,
  };
  if (!(await deps.store.invitations.addInvitation(record, MAX_PENDING_INVITATIONS))) {
    throw new GatewayError(
      'invalid_request',
      `The tenant has ${MAX_PENDING_INVITATIONS} pending invitations: revoke some first.`,
    );
  }
  await deps.audit.record('invitation_created', actor.audit, auditSubject(record));
  mailer.send(invitationMail({ ...record, to: email, tenantName: tenant.name, token, publicUrl }));
  return record;
}

/** The tenant's pending invitations, oldest first. */
export function listInvitations(
  deps: InvitationDeps,
  tenantId: string,
): Promise<InvitationRecord[]> {
  return deps.store.invitations.listInvitations(tenantId, nowOf(deps));
}

/**
 * Revokes one of the tenant's pending invitations: its link stops working.
 * @throws GatewayError `not_found` (none of this tenant's by that id)
 */
export async function revokeInvitation(
  deps: InvitationDeps,
  actor: MemberActor,
  tenantId: string,
  invitationId: string,
): Promise<void> {
  const record = await deps.store.invitations.removeInvitation(tenantId, invitationId);
  if (record === null) throw new GatewayError('not_found', 'The tenant has no such invitation.');
  await deps.audit.record('invitation_revoked', actor.audit, auditSubject(record));
}

/**
 * The pending invitation a mailed token names.
 * @throws GatewayError `not_found`: unknown, used, revoked or expired (one answer for all)
 */
export async function pendingInvitation(
  deps: InvitationDeps,
  token: string,
): Promise<InvitationRecord> {
  const record = isOneTimeTokenShape(token)
    ? await deps.store.invitations.findInvitation(oneTimeTokenDigest(token), nowOf(deps))
    : null;
  if (record === null) throw gone();
  return record;
}

/**
 * `user` accepts the invitation: signed in with the invited address, verified.
 * A member already keeps their role (an invitation never demotes nor
 * promotes), and the invitation is used up.
 * @throws GatewayError `not_found` (see {@link pendingInvitation}; or taken
 * meanwhile, or its tenant removed), `forbidden` (another address: the
 * invitation stays usable), `email_not_verified`
 */
export async function acceptInvitation(
  deps: InvitationDeps,
  actor: Actor,
  token: string,
  user: UserRecord,
): Promise<InvitationRecord> {
  const record = await pendingInvitation(deps, token);
  if (user.email !== record.email) {
    throw new GatewayError('forbidden', 'This invitation is for another address.');
  }
  if (user.emailVerifiedAt === undefined && user.createdByIdp === undefined) {
    throw new GatewayError(
      'email_not_verified',
      'Verify your address before accepting an invitation.',
    );
  }
  return takeInto(deps, actor, record, user);
}

/**
 * A new person, through the link: an account for the invited address with
 * `password`, created verified, and the invitation accepted. An address of a
 * domain a tenant manages follows the signup rule (403 `forbidden`): its
 * owner signs in through their company and accepts with that session.
 * @throws GatewayError `not_found`, `user_exists` (sign in to accept),
 * `invalid_request` (the password policy), `forbidden`
 */
export async function signUpByInvitation(
  deps: InvitationDeps,
  actor: Actor,
  token: string,
  password: string,
): Promise<{ user: UserRecord; invitation: InvitationRecord }> {
  const record = await pendingInvitation(deps, token);
  if ((await deps.store.users.findUserByEmail(record.email)) !== null) {
    throw new GatewayError('user_exists', 'An account has this address: sign in to accept.');
  }
  const created = await createUser(deps, actor, { email: record.email, password });
  await deps.store.users.markEmailVerified(created.id, nowOf(deps));
  const user = { ...created, emailVerifiedAt: nowOf(deps) };
  return { user, invitation: await takeInto(deps, actor, record, user) };
}

/** Takes the invitation (once, whoever races) and makes `user` a member with its role. */
async function takeInto(
  deps: InvitationDeps,
  actor: Actor,
  record: InvitationRecord,
  user: UserRecord,
): Promise<InvitationRecord> {
  const taken = await deps.store.invitations.takeInvitation(record.tokenDigest, nowOf(deps));
  if (taken === null) throw gone();
  const member = { id: user.id, email: user.email };
  if (!(await deps.store.memberships.isMember(taken.tenantId, user.id))) {
    const added = await addMember(deps, actor, taken.tenantId, member, taken.role);
    if (!added && !(await deps.store.memberships.isMember(taken.tenantId, user.id))) throw gone();
  }
  await deps.audit.record('invitation_accepted', actor.audit, {
    ...auditSubject(taken),
    user_id: user.id,
  });
  return taken;
}

/** Revokes the tenant's pending invitations of `email` (a new one replaces them). */
async function replacePending(deps: InvitationDeps, tenantId: string, email: string) {
  for (const pending of await listInvitations(deps, tenantId)) {
    if (pending.email === email)
      await deps.store.invitations.removeInvitation(tenantId, pending.id);
  }
}

function gone(): GatewayError {
  return new GatewayError(
    'not_found',
    'This invitation is not valid: it was used or revoked, or it expired.',
  );
}

function auditSubject(record: InvitationRecord) {
  return {
    tenant_id: record.tenantId,
    user_email: record.email,
    invitation_id: record.id,
    role: record.role,
  };
}
