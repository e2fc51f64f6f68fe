/** The in-memory store's memberships and their roles (see `memory-state.ts`). */
import {
  addToSet,
  ensureOpen,
  nextGeneration,
  pair,
  publish,
  removeFromSet,
  type MemoryState,
} from './memory-state.js';
import { compareIds, normaliseEmail } from './normalise.js';
import {
  LAST_ADMIN,
  type LastAdmin,
  type MemberChangeOptions,
  type MembershipStore,
} from './memberships.js';
import type { MemberRole, Membership, TenantRecord } from './types.js';

export function memoryMemberships(state: MemoryState): MembershipStore {
  const open = () => ensureOpen(state);
  return {
    addMember: async (tenantId, userId, role) => addMember(state, tenantId, userId, role),
    removeMember: async (tenantId, userId, options) =>
      removeMember(state, tenantId, userId, options),
    isMember: async (tenantId, userId) => {
      open();
      return state.membersOfTenant.get(tenantId)?.has(userId) ?? false;
    },
    readMembership: async (tenantId, userId) => {
      open();
      return { membership: membershipOf(state, tenantId, userId), asOf: state.generation };
    },
    membershipForToken: async (tenantId, userId) => {
      open();
      return membershipOf(state, tenantId, userId);
    },
    listUserTenants: async (userId) => {
      open();
      const ids = [...(state.tenantsOfUser.get(userId) ?? [])].sort(compareIds);
      return ids.flatMap((id): TenantRecord[] => {
        const tenant = state.tenants.get(id);
        return tenant === undefined ? [] : [{ ...tenant }];
      });
    },
    listMembers: async (tenantId) => {
      open();
      return [...(state.membersOfTenant.get(tenantId) ?? [])].sort(compareIds);
    },
    listMemberships: async (tenantId) => {
      open();
      return [...(state.membersOfTenant.get(tenantId) ?? [])].sort(compareIds).map((userId) => {
        const membership = state.memberships.get(pair(tenantId, userId));
        return {
          userId,
          role: membership?.role ?? 'member',
          joinedAt: membership?.joinedAt ?? null,
        };
      });
    },
    getMemberRole: async (tenantId, userId) => {
      open();
      if (membershipOf(state, tenantId, userId) === null) return null;
      return state.memberships.get(pair(tenantId, userId))?.role ?? null;
    },
    setMemberRole: async (tenantId, userId, role, options) =>
      setMemberRole(state, tenantId, userId, role, options),
  };
}

function membershipOf(state: MemoryState, tenantId: string, userId: string): Membership | null {
  const current = state.membersOfTenant.get(tenantId)?.has(userId)
    ? state.memberships.get(pair(tenantId, userId))
    : undefined;
  return current === undefined ? null : { generation: current.generation };
}

function addMember(
  state: MemoryState,
  tenantId: string,
  userId: string,
  role: MemberRole | undefined,
): boolean {
  ensureOpen(state);
  const user = state.users.get(userId);
  const tenant = state.tenants.get(tenantId);
  if (user === undefined || tenant === undefined) return false;
  if (state.membersOfTenant.get(tenantId)?.has(userId)) return true;
  addToSet(state.tenantsOfUser, userId, tenantId);
  addToSet(state.membersOfTenant, tenantId, userId);
  const added = nextGeneration(state);
  state.memberships.set(pair(tenantId, userId), {
    generation: added,
    role: role ?? (normaliseEmail(tenant.createdBy) === user.email ? 'admin' : 'member'),
    joinedAt: Math.floor(Date.now() / 1000),
  });
  publish(state, { kind: 'membership-added', userId, tenantId, generation: added });
  return true;
}

function removeMember(
  state: MemoryState,
  tenantId: string,
  userId: string,
  options: MemberChangeOptions = {},
): boolean | LastAdmin {
  ensureOpen(state);
  if (options.keepAnAdmin === true && lastAdmin(state, tenantId, userId)) return LAST_ADMIN;
  const fromTenant = removeFromSet(state.membersOfTenant, tenantId, userId);
  const fromUser = removeFromSet(state.tenantsOfUser, userId, tenantId);
  if (!fromTenant && !fromUser) return false;
  state.memberships.delete(pair(tenantId, userId));
  const generation = nextGeneration(state);
  publish(state, { kind: 'membership-removed', userId, tenantId, generation });
  return true;
}

function setMemberRole(
  state: MemoryState,
  tenantId: string,
  userId: string,
  role: MemberRole,
  options: MemberChangeOptions = {},
): boolean | null | LastAdmin {
  ensureOpen(state);
  const membership = state.membersOfTenant.get(tenantId)?.has(userId)
    ? state.memberships.get(pair(tenantId, userId))
    : undefined;
  if (membership === undefined) return null;
  if (membership.role === role) return false;
  if (options.keepAnAdmin === true && lastAdmin(state, tenantId, userId)) return LAST_ADMIN;
  membership.role = role;
  membership.generation = nextGeneration(state);
  publish(state, { kind: 'membership-added', userId, tenantId, generation: membership.generation });
  return true;
}

/**
 * Whether `userId` is the tenant's one admin, roles read as `listMemberships`
 * reads them. Checked in the same synchronous step as the write that follows.
 */
function lastAdmin(state: MemoryState, tenantId: string, userId: string): boolean {
  const members = state.membersOfTenant.get(tenantId);
  const isAdmin = (id: string) => state.memberships.get(pair(tenantId, id))?.role === 'admin';
  if (members?.has(userId) !== true || !isAdmin(userId)) return false;
  return ![...members].some((id) => id !== userId && isAdmin(id));
}
