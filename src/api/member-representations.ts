/** The tenant admins' views of members and invitations (`schemas/members.ts`). */
import type { z } from 'zod';
import type { TenantMember as Member } from '../identity/tenant-members.js';
import type { InvitationRecord } from '../store/types.js';
import type {
  Invitation,
  InvitationList,
  TenantMember,
  TenantMemberList,
} from './schemas/members.js';

export function memberView(member: Member): z.infer<typeof TenantMember> {
  return {
    user_id: member.userId,
    email: member.email,
    role: member.role,
    joined_at: member.joinedAt,
    federated: member.federated,
  };
}

export function memberList(members: readonly Member[]): z.infer<typeof TenantMemberList> {
  return { members: members.map(memberView) };
}

/** An invitation as its tenant's admins see it: never its token. */
export function invitationView(record: InvitationRecord): z.infer<typeof Invitation> {
  return {
    invitation_id: record.id,
    email: record.email,
    role: record.role,
    created_at: record.createdAt,
    expires_at: record.expiresAt,
    invited_by: record.invitedBy,
  };
}

export function invitationList(
  records: readonly InvitationRecord[],
): z.infer<typeof InvitationList> {
  return { invitations: records.map(invitationView) };
}
