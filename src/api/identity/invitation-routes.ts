/**
 * Invitations (issue 45). An org tenant's admins, by bearer token or session
 * (`tenant-admins.ts`): `GET|POST /1/tenants/:tenant_id/invitations` (list
 * the pending ones; invite an address with a role: 201, and a mail),
 * `DELETE …/invitations/:invitation_id` (revoke: 204). The invitee:
 * `POST /1/invitations/:token/accept`, signed in by Basic, bearer token or
 * session with the invited address, verified (204). The operations are
 * `identity/invitations.ts`; the page a mailed link opens is
 * `invitation-page-routes.ts`.
 */
import type { Router } from '@koa/router';
import { readTokenCredential } from '../../auth/credentials/read-credential.js';
import { GatewayError } from '../../errors.js';
import {
  acceptInvitation,
  createInvitation,
  listInvitations,
  revokeInvitation,
} from '../../identity/invitations.js';
import type { UserRecord } from '../../store/types.js';
import { invitationList, invitationView } from '../member-representations.js';
import { readJsonBody } from '../request-input.js';
import { InvitationRequest } from '../schemas/members.js';
import type { ApiContext, ApiState } from '../state.js';
import { actor, logIn, noStore, sessionOrBearer } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';
import { tenantAdmin, type TenantAdmin } from './tenant-admins.js';

const INVITATIONS = '/tenants/:tenant_id/invitations';

export function addInvitationRoutes(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  router.get(INVITATIONS, async (ctx) => {
    const { tenantId } = await invitationAdmin(deps, ctx);
    noStore(ctx);
    ctx.body = invitationList(await listInvitations(deps, tenantId));
  });
  router.post(INVITATIONS, async (ctx) => {
    const admin = await invitationAdmin(deps, ctx);
    const input = await readJsonBody(ctx, InvitationRequest, deps.bodyLimit);
    const tenant = await deps.store.tenants.getTenant(admin.tenantId);
    if (tenant === null) throw new GatewayError('not_found', 'The tenant no longer exists.');
    const record = await createInvitation(deps, admin.actor, tenant, input);
    noStore(ctx);
    ctx.status = 201;
    ctx.body = invitationView(record);
  });
  router.delete(`${INVITATIONS}/:invitation_id`, async (ctx) => {
    const admin = await invitationAdmin(deps, ctx);
    await revokeInvitation(deps, admin.actor, admin.tenantId, ctx.params.invitation_id as string);
    ctx.status = 204;
  });
  router.post('/invitations/:token/accept', async (ctx) => {
    const user = await invitee(deps, ctx);
    const self = { kind: 'self', audit: actor(deps, ctx, user.email) } as const;
    await acceptInvitation(deps, self, ctx.params.token as string, user);
    ctx.status = 204;
  });
}

function invitationAdmin(deps: IdentityRouterDeps, ctx: ApiContext): Promise<TenantAdmin> {
  return tenantAdmin(deps, ctx, {
    what: 'its invitations',
    orgOnly: 'Nobody is invited into a personal tenant.',
  });
}

/**
 * The user accepting: by Basic (e-mail and password), else by bearer token
 * or session (`sessionOrBearer`: with the cookie, from the same origin only).
 * @throws GatewayError `invalid_credentials`, `invalid_token`, `csrf_refused`,
 * `forbidden` (a machine client)
 */
export async function invitee(deps: IdentityRouterDeps, ctx: ApiContext): Promise<UserRecord> {
  const credential = readTokenCredential(ctx.get('authorization') || undefined);
  if (credential.kind === 'other' && credential.scheme.toLowerCase() === 'basic') {
    return logIn(deps, ctx);
  }
  const caller = await sessionOrBearer(deps, ctx);
  if (caller.kind === 'client') {
    throw new GatewayError('forbidden', 'A machine client cannot accept an invitation.');
  }
  const user = await deps.store.users.getUser(caller.userId);
  if (user === null) throw new GatewayError('invalid_token', 'The account no longer exists.');
  return user;
}
