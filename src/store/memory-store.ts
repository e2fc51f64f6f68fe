import { GatewayError } from '../errors.js';
import { compareIds, normaliseEmail, revocationDeadlineMs, tenantTypeFixed } from './normalise.js';
import { memoryAuditLogs } from './memory-audit.js';
import { memoryLoginCounters } from './login-counters.js';
import type {
  Membership,
  MembershipState,
  NewUser,
  SessionEvent,
  SessionEventListener,
  Store,
  TenantInput,
  TenantRecord,
  UserRecord,
} from './types.js';

/** Below this many deny-list entries a sweep for expired ones is not worth it. */
const MIN_SWEEP_SIZE = 1024;

/**
 * A store held in in-process Maps: the embedded default and the reference the
 * Redis store is tested against. Nothing is shared between processes, so it
 * suits a single instance only. It behaves like the Redis store in every
 * observable way (errors, sorting, expiry), including refusing calls with
 * `unavailable` once closed.
 */
export function createMemoryStore(): Store {
  const users = new Map<string, UserRecord>();
  const userIdsByEmail = new Map<string, string>();
  const tenants = new Map<string, TenantRecord>();
  const tenantsOfUser = new Map<string, Set<string>>();
  const membersOfTenant = new Map<string, Set<string>>();
  /** `tenant/user` → the membership's generation. */
  const generations = new Map<string, number>();
  /** The last generation taken (see `Membership.generation`). */
  let generation = 0;
  /** jti → deadline in Unix milliseconds. */
  const revoked = new Map<string, number>();
  let nextSweepAt = MIN_SWEEP_SIZE;
  let closed = false;
  /** In one process, delivery is never interrupted. */
  const listeners = new Set<SessionEventListener>();
  const publish = (event: SessionEvent): void => {
    for (const listener of listeners) listener.onEvent(event);
  };

  // Records are copied in and out so a caller mutating an object it passed or
  // received cannot change the store behind its back (Redis gives that for free).
  function ensureOpen(): void {
    if (closed) {
      throw new GatewayError('unavailable', 'The store is unreachable.');
    }
  }

  /** Tenant ids are DNS labels or UUIDs: never a `/`. */
  const pair = (tenantId: string, userId: string): string => `${tenantId}/${userId}`;

  function addToSet(map: Map<string, Set<string>>, key: string, value: string): void {
    const set = map.get(key) ?? new Set<string>();
    set.add(value);
    map.set(key, set);
  }

  function removeFromSet(map: Map<string, Set<string>>, key: string, value: string): boolean {
    const set = map.get(key);
    if (set === undefined || !set.delete(value)) return false;
    if (set.size === 0) map.delete(key);
    return true;
  }

  function membershipOf(tenantId: string, userId: string): Membership | null {
    const current = membersOfTenant.get(tenantId)?.has(userId)
      ? generations.get(pair(tenantId, userId))
      : undefined;
    return current === undefined ? null : { generation: current };
  }

  // Lazy purge: entries are dropped when read, and in a sweep whenever the map
  // has doubled since the last one, so tokens never checked again do not pile up.
  function sweepRevoked(now: number): void {
    if (revoked.size < nextSweepAt) return;
    for (const [jti, deadline] of revoked) {
      if (now > deadline) revoked.delete(jti);
    }
    nextSweepAt = Math.max(MIN_SWEEP_SIZE, revoked.size * 2);
  }

  return {
    async createUser(user: NewUser): Promise<UserRecord> {
      ensureOpen();
      const email = normaliseEmail(user.email);
      const tenant = user.personalTenant;
      if (userIdsByEmail.has(email)) {
        throw new GatewayError('user_exists', 'A user with this e-mail already exists.');
      }
      if (users.has(user.id) || tenants.has(tenant.tenantId)) {
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
      };
      users.set(record.id, record);
      userIdsByEmail.set(email, record.id);
      tenants.set(tenant.tenantId, { ...tenant });
      addToSet(tenantsOfUser, record.id, tenant.tenantId);
      addToSet(membersOfTenant, tenant.tenantId, record.id);
      generations.set(pair(tenant.tenantId, record.id), ++generation);
      return { ...record };
    },

    async getUser(userId: string): Promise<UserRecord | null> {
      ensureOpen();
      const user = users.get(userId);
      return user === undefined ? null : { ...user };
    },

    async findUserByEmail(email: string): Promise<UserRecord | null> {
      ensureOpen();
      const userId = userIdsByEmail.get(normaliseEmail(email));
      const user = userId === undefined ? undefined : users.get(userId);
      return user === undefined ? null : { ...user };
    },

    async listUsers(): Promise<UserRecord[]> {
      ensureOpen();
      return [...users.values()]
        .map((user) => ({ ...user }))
        .sort((a, b) => compareIds(a.id, b.id));
    },

    async setPasswordHash(userId: string, passwordHash: string): Promise<number | null> {
      ensureOpen();
      const user = users.get(userId);
      if (user === undefined) return null;
      user.passwordHash = passwordHash;
      user.sessionVersion += 1;
      publish({ kind: 'session-ended', userId, sessionVersion: user.sessionVersion });
      return user.sessionVersion;
    },

    async replacePasswordHash(
      userId: string,
      expectedHash: string,
      passwordHash: string,
    ): Promise<boolean> {
      ensureOpen();
      const user = users.get(userId);
      if (user === undefined || user.passwordHash !== expectedHash) return false;
      user.passwordHash = passwordHash;
      return true;
    },

    async getSessionVersion(userId: string): Promise<number | null> {
      ensureOpen();
      return users.get(userId)?.sessionVersion ?? null;
    },

    async removeUser(userId: string): Promise<string[] | null> {
      ensureOpen();
      const user = users.get(userId);
      if (user === undefined) return null;
      const tenantIds = [...(tenantsOfUser.get(userId) ?? [])].sort(compareIds);
      const ended = ++generation;
      for (const tenantId of tenantIds) {
        removeFromSet(membersOfTenant, tenantId, userId);
        generations.delete(pair(tenantId, userId));
        publish({ kind: 'membership-removed', userId, tenantId, generation: ended });
      }
      tenantsOfUser.delete(userId);
      tenants.delete(user.personalTenantId);
      membersOfTenant.delete(user.personalTenantId);
      if (userIdsByEmail.get(user.email) === userId) userIdsByEmail.delete(user.email);
      users.delete(userId);
      return tenantIds;
    },

    async upsertTenant(input: TenantInput, now: number): Promise<TenantRecord> {
      ensureOpen();
      const fields = {
        type: input.type,
        name: input.name,
        cloudRegion: input.cloudRegion,
        createdBy: input.createdBy,
      };
      const existing = tenants.get(input.tenantId);
      if (existing === undefined) {
        const created: TenantRecord = {
          tenantId: input.tenantId,
          ...fields,
          createdAt: now,
          modifiedAt: now,
        };
        tenants.set(created.tenantId, created);
        return { ...created };
      }
      if (existing.type !== fields.type) throw tenantTypeFixed();
      const changed = (Object.keys(fields) as (keyof typeof fields)[]).some(
        (key) => existing[key] !== fields[key],
      );
      if (changed) {
        Object.assign(existing, fields, { modifiedAt: now });
      }
      return { ...existing };
    },

    async getTenant(tenantId: string): Promise<TenantRecord | null> {
      ensureOpen();
      const tenant = tenants.get(tenantId);
      return tenant === undefined ? null : { ...tenant };
    },

    async listTenants(): Promise<TenantRecord[]> {
      ensureOpen();
      return [...tenants.values()]
        .map((tenant) => ({ ...tenant }))
        .sort((a, b) => compareIds(a.tenantId, b.tenantId));
    },

    async removeOrgTenant(tenantId: string): Promise<string[] | null> {
      ensureOpen();
      if (tenants.get(tenantId)?.type !== 'orgtenant') return null;
      const members = [...(membersOfTenant.get(tenantId) ?? [])].sort(compareIds);
      const ended = ++generation;
      for (const userId of members) {
        removeFromSet(tenantsOfUser, userId, tenantId);
        generations.delete(pair(tenantId, userId));
        publish({ kind: 'membership-removed', userId, tenantId, generation: ended });
      }
      membersOfTenant.delete(tenantId);
      tenants.delete(tenantId);
      return members;
    },

    async addMember(tenantId: string, userId: string): Promise<boolean> {
      ensureOpen();
      if (!users.has(userId) || !tenants.has(tenantId)) return false;
      if (membersOfTenant.get(tenantId)?.has(userId)) return true;
      addToSet(tenantsOfUser, userId, tenantId);
      addToSet(membersOfTenant, tenantId, userId);
      const added = ++generation;
      generations.set(pair(tenantId, userId), added);
      publish({ kind: 'membership-added', userId, tenantId, generation: added });
      return true;
    },

    async removeMember(tenantId: string, userId: string): Promise<boolean> {
      ensureOpen();
      const fromTenant = removeFromSet(membersOfTenant, tenantId, userId);
      const fromUser = removeFromSet(tenantsOfUser, userId, tenantId);
      if (!fromTenant && !fromUser) return false;
      generations.delete(pair(tenantId, userId));
      publish({ kind: 'membership-removed', userId, tenantId, generation: ++generation });
      return true;
    },

    async isMember(tenantId: string, userId: string): Promise<boolean> {
      ensureOpen();
      return membersOfTenant.get(tenantId)?.has(userId) ?? false;
    },

    async readMembership(tenantId: string, userId: string): Promise<MembershipState> {
      ensureOpen();
      return { membership: membershipOf(tenantId, userId), asOf: generation };
    },

    async membershipForToken(tenantId: string, userId: string): Promise<Membership | null> {
      ensureOpen();
      return membershipOf(tenantId, userId);
    },

    async listUserTenants(userId: string): Promise<TenantRecord[]> {
      ensureOpen();
      const ids = [...(tenantsOfUser.get(userId) ?? [])].sort(compareIds);
      return ids.flatMap((id) => {
        const tenant = tenants.get(id);
        return tenant === undefined ? [] : [{ ...tenant }];
      });
    },

    async listMembers(tenantId: string): Promise<string[]> {
      ensureOpen();
      return [...(membersOfTenant.get(tenantId) ?? [])].sort(compareIds);
    },

    async revokeToken(jti: string, expiresAt: number): Promise<void> {
      ensureOpen();
      const deadline = revocationDeadlineMs(expiresAt);
      const now = Date.now();
      sweepRevoked(now);
      // An expired token is refused anyway: no entry, and none shortened.
      if (now > deadline) return;
      revoked.set(jti, deadline);
      publish({ kind: 'token-revoked', jti });
    },

    async isTokenRevoked(jti: string): Promise<boolean> {
      ensureOpen();
      const deadline = revoked.get(jti);
      if (deadline === undefined) return false;
      if (Date.now() > deadline) {
        revoked.delete(jti);
        return false;
      }
      return true;
    },

    loginCounter: memoryLoginCounters(),

    auditLog: memoryAuditLogs(ensureOpen),

    watchSessions(listener) {
      listeners.add(listener);
      listener.onLive(true);
      return () => {
        listeners.delete(listener);
      };
    },

    async ping(): Promise<void> {
      ensureOpen();
    },

    async close(): Promise<void> {
      closed = true;
      for (const listener of listeners) listener.onLive(false);
      listeners.clear();
    },
  };
}
