/**
 * Invitations to an org tenant (issue 45): a tenant admin invites an e-mail
 * address with a role; the invitee follows a mailed one-time link. The store
 * keeps the link's SHA-256 digest only (`auth/one-time-tokens.ts`), so a copy
 * of the store names no live link. The invitations slice of the store
 * (`Store.invitations`); implemented by `memory-invitations.ts` and
 * `redis-invitations.ts`.
 */
import type { MemberRole } from './memberships.js';

/** One pending invitation. */
export interface InvitationRecord {
  /** `inv_…`: public, what the admins list and revoke it by. */
  id: string;
  tenantId: string;
  /** The invited address, normalised (lower case). */
  email: string;
  /** The role the invitee gets on accepting. */
  role: MemberRole;
  /** Unix seconds. */
  createdAt: number;
  /** Unix seconds: from then on it is gone, as if revoked. */
  expiresAt: number;
  /** The inviting admin's e-mail (for the audit trail and the mail). */
  invitedBy: string;
  /** Hex SHA-256 of the mailed token: what the record is found and taken by. */
  tokenDigest: string;
}

export interface InvitationStore {
  /**
   * Stores a new invitation, unless the tenant holds `maxPending` already
   * (expired ones are not counted once a list has swept them).
   * @returns false when the tenant is full.
   */
  addInvitation(record: InvitationRecord, maxPending: number): Promise<boolean>;
  /** The tenant's invitations not yet expired at `now` (Unix seconds), oldest first. */
  listInvitations(tenantId: string, now: number): Promise<InvitationRecord[]>;
  /** The invitation of a token's digest, unless used, revoked or expired at `now`. */
  findInvitation(tokenDigest: string, now: number): Promise<InvitationRecord | null>;
  /**
   * Takes the invitation for good, atomically: of concurrent takers of one
   * digest exactly one gets it; null when used, revoked or expired at `now`.
   */
  takeInvitation(tokenDigest: string, now: number): Promise<InvitationRecord | null>;
  /** Revokes one of the tenant's invitations by id; the removed record, or null when none. */
  removeInvitation(tenantId: string, invitationId: string): Promise<InvitationRecord | null>;
}
