/** The shapes of an org tenant's members and invitations (issue 45), as its admins see them. */
import { z } from 'zod';
import { answerShapes, requestShapes, unixSeconds } from './registry.js';

const role = z.enum(['admin', 'member']).meta({ description: 'The role in the tenant' });

export const TenantMember = z
  .strictObject({
    user_id: z.string(),
    email: z.string(),
    role,
    joined_at: unixSeconds(
      'Unix seconds the membership began; null for one made before the gateway kept it',
    ).nullable(),
    federated: z
      .boolean()
      .meta({ description: "The user was created by this tenant's identity provider" }),
  })
  .register(answerShapes, { id: 'TenantMember' });

export const TenantMemberList = z
  .strictObject({ members: z.array(TenantMember) })
  .register(answerShapes, { id: 'TenantMemberList' });

export const TenantMemberRole = z
  .strictObject({ role })
  .register(requestShapes, { id: 'TenantMemberRole' });

export const InvitationRequest = z
  .strictObject({
    email: z.string().meta({ description: "The invitee's e-mail address" }),
    role: role.default('member').meta({ description: 'The role on accepting; default `member`' }),
  })
  .register(requestShapes, { id: 'InvitationRequest' });

export const Invitation = z
  .strictObject({
    invitation_id: z.string().meta({ description: '`inv_…`: public; never the mailed token' }),
    email: z.string(),
    role,
    created_at: unixSeconds(),
    expires_at: unixSeconds('Unix seconds: 7 days after it was made'),
    invited_by: z.string().meta({ description: "The inviting admin's e-mail" }),
  })
  .register(answerShapes, { id: 'Invitation' });

export const InvitationList = z
  .strictObject({ invitations: z.array(Invitation) })
  .register(answerShapes, { id: 'InvitationList' });
