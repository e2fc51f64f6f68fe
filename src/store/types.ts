/**
 * The store: users, tenants, memberships and session state. One interface, two
 * backends (Redis for production, memory for the embedded default and tests),
 * held to the same behaviour by one contract test suite
 * (`test/store/store-contract.ts`).
 */

import type { AuditLog, AuditLogSpec } from './audit-log.js';
import type { TenantDomains } from './domain-types.js';
import type { SsoRecords, TenantIdps } from './idp-types.js';
import type { LoginCounter, LoginCounterSpec } from './login-counters.js';
import type { RefreshFamilyStore } from './refresh-types.js';

export type { TenantDomain, TenantDomains } from './domain-types.js';
export type { SsoRecordKind, SsoRecords, TenantIdp, TenantIdps } from './idp-types.js';

export type TenantType = 'usertenant' | 'orgtenant';

export interface UserRecord {
  /** Opaque, stable, URL-safe id (never the e-mail). */
  id: string;
  /** Normalised e-mail: trimmed and lower-cased. Unique. */
  email: string;
  name?: string;
  /** bcrypt hash (`$2a$`/`$2b$`). */
  passwordHash: string;
  /**
   * Bumped on every password change. A token carries the version it was issued
   * under and is refused once the user's version has moved on.
   */
  sessionVersion: number;
  /** The user's personal `usertenant`. */
  personalTenantId: string;
  /** Unix seconds. */
  createdAt: number;
  /**
   * The tenant identity provider that created the user at its first sign-in
   * (token exchange); absent for everyone else. Such a user has no password
   * (`auth/no-password.ts`) until one is set.
   */
  createdByIdp?: IdpOrigin;
}

/** A tenant's identity provider, as it was when it created a user. */
export interface IdpOrigin {
  tenantId: string;
  issuer: string;
}

export interface TenantRecord {
  tenantId: string;
  type: TenantType;
  name: string;
  /** Unix seconds. */
  createdAt: number;
  /** Unix seconds. */
  modifiedAt: number;
  cloudRegion: string;
  /** E-mail of the creator. */
  createdBy: string;
}

export interface NewUser {
  id: string;
  email: string;
  name?: string;
  passwordHash: string;
  createdAt: number;
  createdByIdp?: IdpOrigin;
  /** Created in the same atomic write as the user, with the user as its only member. */
  personalTenant: TenantRecord;
}

/** Fields of a tenant an upsert may set; timestamps are kept by the store. */
export interface TenantInput {
  tenantId: string;
  /** Fixed once the tenant exists: tokens carry it (`tenant_type`) and routes admit by it. */
  type: TenantType;
  name: string;
  cloudRegion: string;
  createdBy: string;
}

/**
 * A user's membership of a tenant, as stored (a hash of its own, so that what
 * a token asserts about it can join as a field: a role, next).
 */
export interface Membership {
  /**
   * The membership's generation, from the store's generation counter: every
   * change of a user×tenant pair (the membership begins, ends, or changes
   * what it grants) takes the next one, so a generation never comes back.
   * A token carries the generation it was issued under (`mg`) and is good
   * only while its membership still has it.
   */
  generation: number;
}

/**
 * What a member may do in a tenant: `authorization.roles` maps each role to
 * scopes. A membership's role is stored with it; one stored before roles
 * existed reads as `admin` when the user created the tenant
 * (`TenantRecord.createdBy`), else as `member`.
 */
export type MemberRole = 'admin' | 'member';

/** A tenant's machine client (service account); its secret is kept only as a digest. */
export interface ClientRecord {
  /** `tgc_…`, unique in the store. */
  clientId: string;
  tenantId: string;
  name: string;
  /** Sorted, without duplicates. */
  scopes: string[];
  /** SHA-256 of the secret, hex (`auth/secrets.ts`). */
  secretDigest: string;
  /**
   * From the store's generation counter (see `Membership.generation`): taken
   * anew at creation and at every rotation, so a token issued before a change
   * never matches the client again.
   */
  generation: number;
  /** Unix seconds. */
  createdAt: number;
  /** Unix seconds; absent: never expires. */
  expiresAt?: number;
  /** Unix seconds of the last rotation. */
  rotatedAt?: number;
  /**
   * Who made it: a tenant admin (the identity API) or the operator (the
   * CLI). A client an admin made holds at most the admin role's scopes now
   * (`auth/client-scope-bounds.ts`); absent (made before this was recorded):
   * bounded as an admin's.
   */
  createdBy?: ClientMaker;
}

/** Who made a machine client. */
export type ClientMaker = 'admin' | 'operator';

/** What `createClient` is given; the store adds the generation. */
export type NewClient = Omit<ClientRecord, 'generation' | 'rotatedAt'>;

/** An API key of a machine client; the key itself is kept only as a digest. */
export interface ApiKeyRecord {
  /** `tgkid_…`, unique in the store; the key names it. */
  keyId: string;
  clientId: string;
  /** The client's tenant, copied at creation (a client never changes tenant). */
  tenantId: string;
  /** SHA-256 of the key, hex. */
  digest: string;
  /** From the store's generation counter, taken at creation. */
  generation: number;
  /** Unix seconds. */
  createdAt: number;
  /** Unix seconds; absent: never expires. */
  expiresAt?: number;
  /** Unix seconds of the last use seen (written in the background, so approximate). */
  lastUsedAt?: number;
}

/** What `createApiKey` is given; the store adds the tenant and the generation. */
export type NewApiKey = Omit<ApiKeyRecord, 'tenantId' | 'generation' | 'lastUsedAt'>;

/** Refresh-token families (issue 33): records and their store methods, in `refresh-types.ts`. */
export {
  REFRESH_RECORD_MARGIN_SECONDS,
  REFRESH_USED_DIGESTS_KEPT,
  type FamilyToRotate,
  type RefreshFamily,
  type RefreshFamilyStore,
  type RotateRefreshInput,
  type RotateResult,
} from './refresh-types.js';

/** What the store says of one user×tenant pair, read in one atomic step. */
export interface MembershipState {
  /** null when the user is not a member of the tenant. */
  membership: Membership | null;
  /**
   * The store's generation counter when read: every later change of the pair
   * takes a greater generation, so this state holds for every token whose
   * generation is not greater.
   */
  asOf: number;
}

/**
 * What other instances must hear about at once: a password change ended a
 * user's sessions, a token was revoked, or a membership ended or began (a
 * token is good only for the membership it was issued under). Published
 * atomically with the write that causes it, and only when that write changed
 * something.
 *
 * A membership event's `generation` is the pair's generation after the
 * change: the new membership's, or the one its end took. It is absent when
 * the sender does not know it (a lease confirmation, or an instance of an
 * earlier version): a listener then forgets what it knew of the pair.
 */
export type SessionEvent =
  | { kind: 'session-ended'; userId: string; sessionVersion: number }
  | { kind: 'token-revoked'; jti: string }
  | { kind: 'membership-removed'; userId: string; tenantId: string; generation?: number }
  | { kind: 'membership-added'; userId: string; tenantId: string; generation?: number }
  /**
   * A machine client rotated or removed (with its tenant or alone), or one of
   * its API keys removed: forget what is known of it and its keys.
   */
  | { kind: 'client-changed'; clientId: string };

export interface SessionEventListener {
  /**
   * An event, from this instance or any other sharing the store. A store tells
   * its own watchers of its own writes before the write resolves; the same
   * event may then arrive again (applying one is idempotent).
   */
  onEvent(event: SessionEvent): void;
  /**
   * Whether events are being delivered. While false, events may be lost: a
   * cache built on them must not be trusted (and must be dropped when it turns
   * true again).
   */
  onLive(live: boolean): void;
  /**
   * A confirmation request (lease mode): its events have just been given to
   * `onEvent`; a lease holder acknowledges `confirmationId` once it has
   * applied them.
   */
  onConfirmationRequest?(confirmationId: string): void;
}

/**
 * Revocation leases (`revocation.mode: lease`): what makes a revocation
 * strict across hosts. Each serving instance holds a short lease and trusts
 * its session cache only while the lease is fresh; a revocation asks every
 * holder to confirm it has applied the change, and the ones that do not lose
 * their lease. Lease ends are kept on the store's clock. Only a store shared
 * between processes has them.
 */
export interface RevocationLeases {
  /**
   * Takes or renews `holderId`'s lease for `ms`.
   * @returns true when an unexpired lease was renewed; false when a new one was
   * taken (the old one had ended or was fenced: the holder missed something).
   */
  hold(holderId: string, ms: number): Promise<boolean>;
  release(holderId: string): Promise<void>;
  /** Publishes `events` as one confirmation request to every instance. */
  requestConfirmation(confirmationId: string, events: readonly SessionEvent[]): Promise<void>;
  acknowledge(confirmationId: string, holderId: string): Promise<void>;
  /** How many holders of a live lease have not acknowledged `confirmationId`. */
  unacknowledged(confirmationId: string): Promise<number>;
  /**
   * Ends the lease of every live holder that has not acknowledged.
   * @returns the longest time (ms) one of those leases had left; 0 for none.
   */
  fenceUnacknowledged(confirmationId: string): Promise<number>;
}

/** One rate-limit bucket's turn in a reconcile (see `redis-rate-leases.ts`). */
export interface RateLeaseRequest {
  /** The bucket's identity (route, policy, tenant or user); the store adds its prefix. */
  bucket: string;
  ratePerSecond: number;
  burst: number;
  /** Tokens this instance still holds of its earlier leases. */
  held: number;
  /**
   * Tokens this instance gave itself before its first grant (a bucket new to
   * it admits one request at once), to take out of the shared bucket now: it
   * may go into debt, which its refill pays back before anything is granted.
   */
  charge: number;
  /** Gives back what it holds and stops taking part (the bucket went idle here). */
  leaving: boolean;
}

/** The instance settling its buckets. */
export interface RateLeaseHolder {
  /** Unique per process. */
  id: string;
  /** Past this silence an instance no longer takes part, and what it held is written off. */
  silentAfterMs: number;
}

/** What a reconcile gave one bucket. */
export interface RateLease {
  /** Tokens added to this instance's holding (0 when its share is already held). */
  grant: number;
  /** Instances taking part in the bucket, this one included (at least 1). */
  instances: number;
  /** The shared tokens left after this call: below 0 while the bucket is in debt. */
  shared: number;
}

/**
 * The refresh-family methods are declared in {@link RefreshFamilyStore}; the
 * tenants' identity providers in {@link TenantIdps}, the browser sign-in's
 * one-time records in {@link SsoRecords}.
 */
export interface Store extends RefreshFamilyStore, TenantIdps, TenantDomains, SsoRecords {
  /**
   * Creates the user and its personal tenant (with the membership both ways,
   * at a new generation, the user its `admin`) atomically: all of it or none of it.
   * @throws GatewayError `user_exists` when the e-mail is taken.
   */
  createUser(user: NewUser): Promise<UserRecord>;
  getUser(userId: string): Promise<UserRecord | null>;
  /** Case-insensitive. */
  findUserByEmail(email: string): Promise<UserRecord | null>;
  listUsers(): Promise<UserRecord[]>;
  /**
   * Replaces the hash and bumps the session version in one atomic step.
   * @returns the new session version, or null when the user does not exist.
   */
  setPasswordHash(userId: string, passwordHash: string): Promise<number | null>;
  /**
   * Replaces the hash without ending sessions (rehash at a higher cost after a
   * successful login). Only applies if the stored hash is still `expectedHash`.
   */
  replacePasswordHash(userId: string, expectedHash: string, passwordHash: string): Promise<boolean>;
  /** null when the user does not exist (any token of theirs is then invalid). */
  getSessionVersion(userId: string): Promise<number | null>;
  /**
   * Removes the user, their e-mail, their personal tenant and every
   * membership of theirs, atomically. Publishes `membership-removed` for each
   * membership (every token is for a tenant its user belongs to), so all
   * their tokens are refused on every instance before this resolves.
   * @returns the ids of the tenants the user was a member of, sorted; null
   * when the user does not exist.
   */
  removeUser(userId: string): Promise<string[] | null>;

  /**
   * Creates the tenant, or updates name/region/creator of an existing one
   * (keeping `createdAt`, setting `modifiedAt`). Unchanged input is a no-op.
   * @throws GatewayError `invalid_request` when the tenant exists with
   * another type (its members' tokens carry the type), writing nothing.
   */
  upsertTenant(tenant: TenantInput, now: number): Promise<TenantRecord>;
  getTenant(tenantId: string): Promise<TenantRecord | null>;
  listTenants(): Promise<TenantRecord[]>;
  /**
   * Removes an org tenant and its memberships, atomically, publishing
   * `membership-removed` for each member (with a new generation: a tenant
   * created again under the id does not bring them back): their tokens for the tenant are
   * refused on every instance before this resolves (their other tenants are
   * untouched). Its machine clients and their API keys, and its identity
   * provider's record and issuer (`TenantIdps`) and its domains (`TenantDomains`), go in the same write.
   * A personal tenant goes only with its user (`removeUser`).
   * @returns the ids of the members it had, sorted; null when there is no
   * org tenant with this id.
   */
  removeOrgTenant(tenantId: string): Promise<string[] | null>;

  /**
   * Idempotent; a new membership takes a new generation and publishes
   * `membership-added`. Its role is `role`, by default `admin` for the
   * tenant's creator (`createdBy`) and `member` for anyone else; an existing
   * membership keeps its role (see `setMemberRole`).
   * @returns false when the user or the tenant does not exist.
   */
  addMember(tenantId: string, userId: string, role?: MemberRole): Promise<boolean>;
  /**
   * Idempotent; removing a membership takes a new generation and publishes
   * `membership-removed`, which ends the user's tokens for the tenant on
   * every instance before this resolves — for good: a membership added back
   * later has a generation of its own.
   * @returns whether a membership was removed.
   */
  removeMember(tenantId: string, userId: string): Promise<boolean>;
  isMember(tenantId: string, userId: string): Promise<boolean>;
  /** The pair's state for judging a token: the membership and the generation counter, read together. */
  readMembership(tenantId: string, userId: string): Promise<MembershipState>;
  /**
   * The membership a new token is issued under; null when the user is not a
   * member. A membership stored by a version before generations gets its
   * generation here (and publishes `membership-added`).
   */
  membershipForToken(tenantId: string, userId: string): Promise<Membership | null>;
  /** The user's tenants, sorted by tenantId. */
  listUserTenants(userId: string): Promise<TenantRecord[]>;
  /** User ids, sorted. */
  listMembers(tenantId: string): Promise<string[]>;
  /**
   * The member's role; null when the user is not a member of the tenant.
   */
  getMemberRole(tenantId: string, userId: string): Promise<MemberRole | null>;
  /**
   * Gives a member a role. A change takes a new generation for the
   * membership and publishes `membership-added` with it: the member's tokens
   * for the tenant (issued under the old role) are refused on every instance
   * before this resolves, as after a removal; their new ones carry the new
   * generation. Setting the role a member has changes nothing.
   * @returns whether the role changed; null when the user is not a member.
   */
  setMemberRole(tenantId: string, userId: string, role: MemberRole): Promise<boolean | null>;

  /**
   * Creates a machine client of an org tenant, at a new generation.
   * @returns null when there is no org tenant `client.tenantId`.
   * @throws GatewayError `internal_error` when the client id is in use.
   */
  createClient(client: NewClient): Promise<ClientRecord | null>;
  getClient(clientId: string): Promise<ClientRecord | null>;
  /** The tenant's clients, sorted by clientId. */
  listClients(tenantId: string): Promise<ClientRecord[]>;
  /**
   * Replaces the client's secret digest, at a new generation: the old secret
   * is unknown from then on. Publishes `client-changed`.
   * @returns the updated client; null when there is none.
   */
  rotateClientSecret(
    clientId: string,
    secretDigest: string,
    now: number,
  ): Promise<ClientRecord | null>;
  /**
   * Removes the client and every key of it, atomically, taking a new
   * generation; publishes `client-changed` (as `removeOrgTenant` does for each client).
   * @returns the ids of the keys removed with it, sorted; null when there is no such client.
   */
  removeClient(clientId: string): Promise<string[] | null>;
  /**
   * Adds an API key to a client, at a new generation.
   * @returns null when there is no client `key.clientId`.
   * @throws GatewayError `internal_error` when the key id is in use.
   */
  createApiKey(key: NewApiKey): Promise<ApiKeyRecord | null>;
  getApiKey(keyId: string): Promise<ApiKeyRecord | null>;
  /** The client's keys, sorted by keyId. */
  listApiKeys(clientId: string): Promise<ApiKeyRecord[]>;
  /**
   * Removes one key of a client, taking a new generation, and publishes
   * `client-changed` for the client (every instance forgets its keys).
   * @returns whether the client had the key.
   */
  removeApiKey(clientId: string, keyId: string): Promise<boolean>;
  /**
   * Records a use of the key at `at` (Unix seconds), unless a later one is
   * recorded; nothing for a key that does not exist. Meant for the
   * background: no session event, no replica wait.
   */
  touchApiKey(keyId: string, at: number): Promise<void>;

  /** Deny-lists a token id until `expiresAt` (Unix seconds); the entry then disappears. */
  revokeToken(jti: string, expiresAt: number): Promise<void>;
  isTokenRevoked(jti: string): Promise<boolean>;

  /**
   * Delivers session events to `listener` until the returned function is
   * called. `onLive(true)` is called once delivery has begun.
   */
  watchSessions(listener: SessionEventListener): () => void;

  /** Present when several processes share the store (Redis); see {@link RevocationLeases}. */
  readonly revocationLeases?: RevocationLeases;

  /** A brute-force counter kept in this store (shared by every instance on it). */
  loginCounter(spec: LoginCounterSpec): LoginCounter;

  /** The audit streams kept in this store (shared by every instance on it), bounded by `spec`. */
  auditLog(spec: AuditLogSpec): AuditLog;
  /**
   * Settles rate-limit buckets shared by every instance on this store: each
   * request returns or keeps what the instance holds and gets its share of
   * what the shared bucket has. Per bucket, undefined when that bucket could
   * not be settled; rejects when none could. Absent: the store is this
   * process's alone (in memory), and buckets are limited in process.
   */
  leaseRates?(
    instance: RateLeaseHolder,
    requests: readonly RateLeaseRequest[],
  ): Promise<(RateLease | undefined)[]>;

  /** Resolves when the backend answers; rejects with `unavailable` otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
