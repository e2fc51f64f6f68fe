/**
 * `member add|remove|role|list`: an org tenant's members and their roles
 * (`admin` or `member`), by the identity operations (`identity/members.ts`),
 * the operator as actor. A removal or a role change ends the member's tokens
 * for the tenant on every running instance before the command returns.
 */
import type { LoadedConfig } from '../config/index.js';
import type { Core } from '../core/create-core.js';
import { addMember, changeRole, removeMember } from '../identity/members.js';
import type { MemberRole } from '../store/types.js';
import { operator, orgTenant, print, withCore } from './store-command.js';
import { notFoundAs, UsageError } from './usage-error.js';

export const ROLES: readonly MemberRole[] = ['admin', 'member'];

/** `--role` or the role argument. */
export function roleOption(value: string | undefined): MemberRole | undefined {
  if (value === undefined) return undefined;
  if (value !== 'admin' && value !== 'member') {
    throw new UsageError('the role must be admin or member');
  }
  return value;
}

/**
 * Adds or removes an org tenant's member. A new member takes `role`, by
 * default `admin` for the tenant's creator and `member` for anyone else; an
 * existing member given a `role` gets it (as `member role`). A removal is for
 * good: adding them back gives the membership a new generation, which only
 * tokens issued since carry (old ones are refused, 401, and their WebSockets
 * closed, 1008).
 */
export async function memberChange(
  loaded: LoadedConfig,
  action: 'add' | 'remove',
  tenantId: string,
  email: string,
  role?: MemberRole,
): Promise<void> {
  await withCore(loaded, async (core) => {
    await orgTenant(core, tenantId);
    const user = await core.store.users.findUserByEmail(email);
    if (user === null) throw new UsageError(`no user ${email}`);
    if (action === 'remove') await removeMember(core, operator(), tenantId, user);
    else await addMember(core, operator(), tenantId, user, role);
    print(await membersOf(core, tenantId));
  });
}

/** `member role <tenant> <email> <role>`. */
export async function memberRole(
  loaded: LoadedConfig,
  tenantId: string,
  email: string,
  role: MemberRole,
): Promise<void> {
  await withCore(loaded, async (core) => {
    await orgTenant(core, tenantId);
    const user = await core.store.users.findUserByEmail(email);
    if (user === null) throw new UsageError(`no user ${email}`);
    await changeRole(core, operator(), tenantId, user, role).catch(
      notFoundAs(`${user.email} is not a member of ${tenantId}`),
    );
    print(await membersOf(core, tenantId));
  });
}

export async function memberList(loaded: LoadedConfig, tenantId: string): Promise<void> {
  await withCore(loaded, async (core) => {
    if ((await core.store.tenants.getTenant(tenantId)) === null) {
      throw new UsageError(`no tenant ${tenantId}`);
    }
    print(await membersOf(core, tenantId));
  });
}

async function membersOf(core: Core, tenantId: string) {
  const ids = await core.store.memberships.listMembers(tenantId);
  const [users, roles] = await Promise.all([
    Promise.all(ids.map((id) => core.store.users.getUser(id))),
    Promise.all(ids.map((id) => core.store.memberships.getMemberRole(tenantId, id))),
  ]);
  return {
    tenant_id: tenantId,
    members: ids.map((id, i) => ({
      user_id: id,
      user_email: users[i]?.email ?? null,
      role: roles[i] ?? null,
    })),
  };
}
