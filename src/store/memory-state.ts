/**
 * The in-memory store's state and the helpers its parts share
 * (`memory-users.ts`, `memory-tenants.ts`, `memory-memberships.ts`,
 * `memory-revocations.ts`, `memory-clients.ts`, `memory-api-keys.ts`, `memory-refresh.ts`,
 * `memory-idps.ts`, `memory-sso.ts`, `memory-domains.ts`, `memory-browser-sessions.ts`, `memory-passkeys.ts`, `memory-totp.ts`, `memory-invitations.ts`; assembled
 * by `memory-store.ts`).
 * Records are copied in and out so a caller mutating an object it passed or
 * received cannot change the store behind its back (Redis gives that for free).
 */
import { GatewayError } from '../errors.js';
import { compareIds } from './normalise.js';
import type { BrowserSessionRecord } from './browser-sessions.js';
import type { TenantDomain } from './domains.js';
import type { PasskeyRecord } from './passkeys.js';
import type { InvitationRecord } from './invitations.js';
import type { StoredRefreshFamily } from './refresh-records.js';
import type {
  ApiKeyRecord,
  ClientRecord,
  MemberRole,
  TenantIdp,
  SessionEvent,
  SessionEventListener,
  TenantRecord,
  UserRecord,
} from './types.js';

/** A stored membership: its generation and role. */
export interface MemoryMembership {
  generation: number;
  role: MemberRole;
  /** Unix seconds; absent on a personal tenant's membership. */
  joinedAt?: number;
}

/** A user's TOTP as the memory store holds it (`memory-totp.ts`): the recovery codes' digests beside it. */
export interface MemoryTotp {
  secretSealed?: string;
  confirmedAt?: number;
  lastStep: number;
  recoveryDigests: Set<string>;
  pending?: { secretSealed: string; createdAt: number };
}

export interface MemoryState {
  users: Map<string, UserRecord>;
  userIdsByEmail: Map<string, string>;
  tenants: Map<string, TenantRecord>;
  tenantsOfUser: Map<string, Set<string>>;
  membersOfTenant: Map<string, Set<string>>;
  /** `tenant/user` → the membership. */
  memberships: Map<string, MemoryMembership>;
  clients: Map<string, ClientRecord>;
  clientsOfTenant: Map<string, Set<string>>;
  apiKeys: Map<string, ApiKeyRecord>;
  keysOfClient: Map<string, Set<string>>;
  /** tenant id → its identity provider. */
  idps: Map<string, TenantIdp>;
  /** `idpClientKey(issuer, clientId)` → the tenant id whose identity provider it is. */
  tenantsByClient: Map<string, string>;
  /** tenant id → its e-mail domains by name. */
  domains: Map<string, Map<string, TenantDomain>>;
  /** verified domain → the one tenant that verified it. */
  verifiedDomains: Map<string, string>;
  /** `<kind>:<key>` → a browser sign-in's one-time record and its deadline in Unix milliseconds. */
  ssoRecords: Map<string, { value: string; expiresAt: number }>;
  /** jti → deadline in Unix milliseconds. */
  revoked: Map<string, number>;
  /** The last generation taken (see `Membership.generation`). */
  generation: number;
  /** familyId → the family and when (Unix seconds) its record vanishes (`memory-refresh.ts`). */
  refreshFamilies: Map<string, { family: StoredRefreshFamily; expiresAt: number }>;
  /** userId → familyId → its tenant and absolute end: the user's live families. */
  refreshFamiliesOfUser: Map<string, Map<string, { tenantId: string; absoluteExpiresAt: number }>>;
  /** sessionId → a browser session (`memory-browser-sessions.ts`). */
  browserSessions: Map<string, BrowserSessionRecord>;
  /** userId → the ids of the user's browser sessions (gone ones pruned when listed). */
  browserSessionsOfUser: Map<string, Set<string>>;
  /** credential id → a passkey (`memory-passkeys.ts`). */
  passkeys: Map<string, PasskeyRecord>;
  /** userId → the credential ids of the user's passkeys. */
  passkeysOfUser: Map<string, Set<string>>;
  /** userId → the user's TOTP (`memory-totp.ts`). */
  totp: Map<string, MemoryTotp>;
  /** token digest → a pending invitation (`memory-invitations.ts`). */
  invitations: Map<string, InvitationRecord>;
  closed: boolean;
  /** In one process, delivery is never interrupted. */
  listeners: Set<SessionEventListener>;
}

export function newMemoryState(): MemoryState {
  return {
    users: new Map(),
    userIdsByEmail: new Map(),
    tenants: new Map(),
    tenantsOfUser: new Map(),
    membersOfTenant: new Map(),
    memberships: new Map(),
    clients: new Map(),
    clientsOfTenant: new Map(),
    apiKeys: new Map(),
    keysOfClient: new Map(),
    idps: new Map(),
    tenantsByClient: new Map(),
    domains: new Map(),
    verifiedDomains: new Map(),
    ssoRecords: new Map(),
    revoked: new Map(),
    generation: 0,
    refreshFamilies: new Map(),
    refreshFamiliesOfUser: new Map(),
    browserSessions: new Map(),
    browserSessionsOfUser: new Map(),
    passkeys: new Map(),
    passkeysOfUser: new Map(),
    totp: new Map(),
    invitations: new Map(),
    closed: false,
    listeners: new Set(),
  };
}

/** Takes the next generation. */
export function nextGeneration(state: MemoryState): number {
  return ++state.generation;
}

export function publish(state: MemoryState, event: SessionEvent): void {
  for (const listener of state.listeners) listener.onEvent(event);
}

export function ensureOpen(state: MemoryState): void {
  if (state.closed) {
    throw new GatewayError('unavailable', 'The store is unreachable.');
  }
}

/** Tenant ids are DNS labels or UUIDs: never a `/`. */
export const pair = (tenantId: string, userId: string): string => `${tenantId}/${userId}`;

export function addToSet(map: Map<string, Set<string>>, key: string, value: string): void {
  const set = map.get(key) ?? new Set<string>();
  set.add(value);
  map.set(key, set);
}

export function removeFromSet(map: Map<string, Set<string>>, key: string, value: string): boolean {
  const set = map.get(key);
  if (set === undefined || !set.delete(value)) return false;
  if (set.size === 0) map.delete(key);
  return true;
}

/** The records of `ids` (an index entry), sorted by id, each copied. */
export function listed<T>(
  ids: Set<string> | undefined,
  records: Map<string, T>,
  copy: (record: T) => T,
): T[] {
  return [...(ids ?? [])].sort(compareIds).flatMap((id) => {
    const record = records.get(id);
    return record === undefined ? [] : [copy(record)];
  });
}
