/**
 * The operations on an org tenant's members and invitations (issue 45): its
 * admins by bearer token or session; the invitee by Basic, bearer token or
 * session; the page a mailed link opens.
 */
import { z } from 'zod';
import { adminOperation, NO_STORE, TENANT_GONE } from './admin-operation.js';
import {
  Invitation,
  InvitationList,
  InvitationRequest,
  TenantMember,
  TenantMemberList,
  TenantMemberRole,
} from './members.js';
import { answer, REQUEST_ID, refusal, type Operation } from './operation.js';
import { requestShapes } from './registry.js';
import { BAD_INPUT, CALLER_REFUSED, STORE_DOWN, tenantIdParam, TOO_LARGE } from './refusals.js';
import { FORM, page } from './sign-in-operations.js';

const MEMBERS = '/1/tenants/{tenant_id}/members';
const INVITATIONS = '/1/tenants/{tenant_id}/invitations';
const tags = ['members'];
const memberParams = tenantIdParam.extend({
  user_id: z.string().meta({ description: 'A `user_id` of the members list.' }),
});
const NO_MEMBER =
  'No such member of this tenant (unknown, or a member of another tenant only: one answer), or the tenant is gone.';
const LAST_ADMIN = "the member is the tenant's last admin (`forbidden`: make another admin first)";
const tokenParam = z.object({
  token: z.string().meta({ description: 'The one-time token of the mailed link.' }),
});
const GONE = refusal(
  'The invitation is unknown, used, revoked or expired (one answer).',
  'not_found',
);

export const listTenantMembers = adminOperation({
  method: 'get',
  path: MEMBERS,
  operationId: 'listTenantMembers',
  summary: "The tenant's members, their roles and when each joined",
  tags,
  params: tenantIdParam,
  answers: { 200: answer('The members, by user id.', TenantMemberList, NO_STORE) },
  notFound: TENANT_GONE,
});

export const setTenantMemberRole = adminOperation({
  method: 'put',
  path: `${MEMBERS}/{user_id}`,
  operationId: 'setTenantMemberRole',
  summary: "Change a member's role: their tokens and sessions for the tenant end everywhere",
  tags,
  params: memberParams,
  body: { schema: TenantMemberRole, required: true },
  answers: { 200: answer('The member as they are now.', TenantMember, NO_STORE) },
  refusals: { 400: BAD_INPUT, 413: TOO_LARGE },
  forbiddenToo: LAST_ADMIN,
  notFound: NO_MEMBER,
});

export const removeTenantMember = adminOperation({
  method: 'delete',
  path: `${MEMBERS}/{user_id}`,
  operationId: 'removeTenantMember',
  summary: 'Remove a member: their tokens and sessions for the tenant end everywhere',
  tags,
  params: memberParams,
  answers: { 204: { description: 'Removed.', headers: REQUEST_ID } },
  forbiddenToo: LAST_ADMIN,
  notFound: NO_MEMBER,
});

export const listInvitations = adminOperation({
  method: 'get',
  path: INVITATIONS,
  operationId: 'listInvitations',
  summary: "The tenant's pending invitations (never a token)",
  tags,
  params: tenantIdParam,
  answers: { 200: answer('Pending invitations, oldest first.', InvitationList, NO_STORE) },
  notFound: TENANT_GONE,
});

export const createInvitation = adminOperation({
  method: 'post',
  path: INVITATIONS,
  operationId: 'createInvitation',
  summary: 'Invite an address with a role: a one-time link is mailed, valid 7 days',
  description:
    'A pending invitation of the same address is replaced. Needs `mail` (else 400). At most 100 pending per tenant.',
  tags,
  params: tenantIdParam,
  body: { schema: InvitationRequest, required: true },
  answers: { 201: answer('The invitation (its link only in the mail).', Invitation, NO_STORE) },
  refusals: {
    400: refusal(
      'Malformed input or address; no `mail` configured; 100 invitations pending (`invalid_request`).',
      'invalid_request',
    ),
    409: refusal('The address is a member of the tenant already.', 'user_exists'),
    413: TOO_LARGE,
  },
  notFound: TENANT_GONE,
});

export const revokeInvitation = adminOperation({
  method: 'delete',
  path: `${INVITATIONS}/{invitation_id}`,
  operationId: 'revokeInvitation',
  summary: 'Revoke a pending invitation: its link stops working',
  tags,
  params: tenantIdParam.extend({
    invitation_id: z.string().meta({ description: 'An `invitation_id` of the list.' }),
  }),
  answers: { 204: { description: 'Revoked.', headers: REQUEST_ID } },
  notFound: "No pending invitation of this tenant's by that id.",
});

export const acceptInvitation: Operation = {
  method: 'post',
  path: '/1/invitations/{token}/accept',
  operationId: 'acceptInvitation',
  summary: 'Accept an invitation, signed in with the invited address (verified)',
  description:
    'A member already keeps their role; the invitation is used up either way. Of concurrent accepts one wins.',
  tags,
  security: [{ basic: [] }, { bearer: [] }, { session: [] }],
  params: tokenParam,
  answers: { 204: { description: 'A member of the tenant.', headers: REQUEST_ID } },
  refusals: {
    401: refusal(
      'Basic credentials wrong (`invalid_credentials`), or no bearer token or session, or a bad one (`invalid_token`).',
      'invalid_credentials',
      'invalid_token',
    ),
    403: refusal(
      'Signed in with another address (`forbidden`; the invitation stays usable) or as a machine client; the address not verified (`email_not_verified`); with the session cookie, not from the same origin (`csrf_refused`).',
      'forbidden',
      'email_not_verified',
      'csrf_refused',
    ),
    404: GONE,
    503: STORE_DOWN,
  },
};

const InvitationForm = z
  .object({
    action: z
      .enum(['accept', 'sign-up'])
      .optional()
      .meta({ description: '`sign-up`: create the account; else accept as the session.' }),
    password: z.string().optional().meta({ description: '`sign-up`: the new password.' }),
  })
  .register(requestShapes, { id: 'InvitationForm' });

export const showInvitation: Operation = {
  method: 'get',
  path: '/1/invitations/{token}',
  operationId: 'showInvitation',
  summary: 'The page a mailed invitation link opens',
  description:
    "The tenant's name and the role; then accept (signed in with the address), sign in to accept, or choose a password (no account yet). `Referrer-Policy: no-referrer`.",
  tags,
  pages: true,
  security: [{}],
  params: tokenParam,
  answers: { 200: page('The invitation page.') },
  refusals: { 404: GONE, 503: STORE_DOWN },
};

export const postInvitation: Operation = {
  method: 'post',
  path: '/1/invitations/{token}',
  operationId: 'postInvitation',
  summary: "The invitation page's form: accept, or create the account (verified) and join",
  tags,
  pages: true,
  security: [{}, { session: [] }],
  params: tokenParam,
  body: { schema: InvitationForm, required: true, mediaType: FORM },
  answers: { 200: page('Joined.') },
  refusals: {
    400: BAD_INPUT,
    401: CALLER_REFUSED,
    403: refusal(
      'Not from the same origin (`csrf_refused`); another address (`forbidden`); not verified (`email_not_verified`).',
      'csrf_refused',
      'forbidden',
      'email_not_verified',
    ),
    404: GONE,
    409: refusal('The address has an account: sign in to accept.', 'user_exists'),
    503: STORE_DOWN,
  },
};
