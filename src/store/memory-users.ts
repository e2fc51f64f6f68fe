/** The in-memory store's users (see `memory-state.ts`). */
import { GatewayError } from '../errors.js';
import { removeTenantClients } from './memory-clients.js';
import { removeUserPasskeys } from './memory-passkeys.js';
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
import type { UserStore } from './users.js';
import type { NewUser, UserRecord } from './types.js';

export function memoryUsers(state: MemoryState): UserStore {
  const { users } = state;
  const copy = (user: UserRecord | undefined) => (user === undefined ? null : { ...user });
  return {
    createUser: async (user) => createUser(state, user),
    getUser: async (userId) => {
      ensureOpen(state);
      return copy(users.get(userId));
    },
    findUserByEmail: async (email) => {
      ensureOpen(state);
      const userId = state.userIdsByEmail.get(normaliseEmail(email));
      return copy(userId === undefined ? undefined : users.get(userId));
    },
    listUsers: async () => {
      ensureOpen(state);
      return [...users.values()].map((u) => ({ ...u })).sort((a, b) => compareIds(a.id, b.id));
    },
    setPasswordHash: async (userId, passwordHash, ifVersion) => {
      ensureOpen(state);
      const user = users.get(userId);
      if (user === undefined) return null;
      if (ifVersion !== undefined && user.sessionVersion !== ifVersion) return null;
      user.passwordHash = passwordHash;
      user.sessionVersion += 1;
      publish(state, { kind: 'session-ended', userId, sessionVersion: user.sessionVersion });
      return user.sessionVersion;
    },
    replacePasswordHash: async (userId, expectedHash, passwordHash) => {
      ensureOpen(state);
      const user = users.get(userId);
      if (user === undefined || user.passwordHash !== expectedHash) return false;
      user.passwordHash = passwordHash;
      return true;
    },
    getSessionVersion: async (userId) => {
      ensureOpen(state);
      return users.get(userId)?.sessionVersion ?? null;
    },
    markEmailVerified: async (userId, at) => {
      ensureOpen(state);
      const user = state.users.get(userId);
      if (user === undefined) return false;
      user.emailVerifiedAt ??= at;
      return true;
    },
    removeUser: async (userId) => removeUser(state, userId),
  };
}

function createUser(state: MemoryState, user: NewUser): UserRecord {
  ensureOpen(state);
  const email = normaliseEmail(user.email);
  const tenant = user.personalTenant;
  if (state.userIdsByEmail.has(email)) {
    throw new GatewayError('user_exists', 'A user with this e-mail already exists.');
  }
  if (state.users.has(user.id) || state.tenants.has(tenant.tenantId)) {
    throw new GatewayError('internal_error', 'The user id or tenant id is already in use.');
  }
  const record: UserRecord = {
    id: user.id,
    email,
    ...(user.name === undefined ? {} : { name: user.name }),
    passwordHash: user.passwordHash,
    sessionVersion: 0,
    personalTenantId: tenant.tenantId,
    createdAt: user.createdAt,
    ...(user.createdByIdp === undefined ? {} : { createdByIdp: { ...user.createdByIdp } }),
    ...(user.emailVerifiedAt === undefined ? {} : { emailVerifiedAt: user.emailVerifiedAt }),
  };
  state.users.set(record.id, record);
  state.userIdsByEmail.set(email, record.id);
  state.tenants.set(tenant.tenantId, { ...tenant });
  addToSet(state.tenantsOfUser, record.id, tenant.tenantId);
  addToSet(state.membersOfTenant, tenant.tenantId, record.id);
  state.memberships.set(pair(tenant.tenantId, record.id), {
    generation: nextGeneration(state),
    role: 'admin',
  });
  return { ...record };
}

function removeUser(state: MemoryState, userId: string): string[] | null {
  ensureOpen(state);
  const user = state.users.get(userId);
  if (user === undefined) return null;
  const tenantIds = [...(state.tenantsOfUser.get(userId) ?? [])].sort(compareIds);
  const ended = nextGeneration(state);
  for (const tenantId of tenantIds) {
    removeFromSet(state.membersOfTenant, tenantId, userId);
    state.memberships.delete(pair(tenantId, userId));
    publish(state, { kind: 'membership-removed', userId, tenantId, generation: ended });
  }
  state.tenantsOfUser.delete(userId);
  state.tenants.delete(user.personalTenantId);
  state.membersOfTenant.delete(user.personalTenantId);
  removeTenantClients(state, user.personalTenantId);
  if (state.userIdsByEmail.get(user.email) === userId) state.userIdsByEmail.delete(user.email);
  removeUserPasskeys(state, userId);
  state.users.delete(userId);
  state.totp.delete(userId);
  return tenantIds;
}
