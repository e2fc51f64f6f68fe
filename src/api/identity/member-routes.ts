/**
 * An org tenant's members for its admins (`/1/tenants/:tenant_id/members`,
 * issue 45): list them, change a role (200 with the member as they are
 * now), remove one (204). Each change ends the member's tokens and sessions
 * for the tenant on every instance before the answer. The caller is an
 * admin of the tenant by bearer token or session (`tenant-admins.ts`); the
 * operations and their rules are `identity/tenant-members.ts`.
 */
import type { Router } from '@koa/router';
import {
  listTenantMembers,
  removeTenantMember,
  setTenantMemberRole,
} from '../../identity/tenant-members.js';
import { memberList, memberView } from '../member-representations.js';
import { readJsonBody } from '../request-input.js';
import { TenantMemberRole } from '../schemas/members.js';
import type { ApiContext, ApiState } from '../state.js';
import { noStore } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';
import { tenantAdmin, type TenantAdmin } from './tenant-admins.js';

const MEMBERS = '/tenants/:tenant_id/members';
const MEMBER = `${MEMBERS}/:user_id`;

export function addMemberRoutes(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  router.get(MEMBERS, async (ctx) => {
    const { tenantId } = await memberAdmin(deps, ctx);
    noStore(ctx);
    ctx.body = memberList(await listTenantMembers(deps, tenantId));
  });
  router.put(MEMBER, async (ctx) => {
    const admin = await memberAdmin(deps, ctx);
    const { role } = await readJsonBody(ctx, TenantMemberRole, deps.bodyLimit);
    const userId = ctx.params.user_id as string;
    const member = await setTenantMemberRole(deps, admin.actor, admin.tenantId, userId, role);
    noStore(ctx);
    ctx.body = memberView(member);
  });
  router.delete(MEMBER, async (ctx) => {
    const admin = await memberAdmin(deps, ctx);
    await removeTenantMember(deps, admin.actor, admin.tenantId, ctx.params.user_id as string);
    ctx.status = 204;
  });
}

function memberAdmin(deps: IdentityRouterDeps, ctx: ApiContext): Promise<TenantAdmin> {
  return tenantAdmin(deps, ctx, {
    what: 'its members',
    orgOnly: 'A personal tenant has no members to manage.',
  });
}
