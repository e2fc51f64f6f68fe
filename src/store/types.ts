/**
 * The store: users, tenants, memberships and session state, as slices of one
 * concern each (`Store.users`, `Store.tenants`, …), every slice a small
 * interface in a file of its own (`users.ts` declaring `UserStore`, …) beside
 * its memory (`memory-*.ts`) and Redis (`redis-*.ts`) implementations. Two
 * backends held to the same behaviour by one contract suite
 * (`test/store/store-contract-<slice>.ts`). This file assembles the slices
 * and re-exports their records, so `store/types.js` names every store type.
 */

import type { ApiKeyStore } from './api-keys.js';
import type { BrowserSessionStore } from './browser-sessions.js';
import type { AuditLog, AuditLogSpec } from './audit-log.js';
import type { ClientStore } from './clients.js';
import type { DomainStore } from './domains.js';
import type { IdpStore } from './idps.js';
import type { InvitationStore } from './invitations.js';
import type { LoginCounter, LoginCounterSpec } from './login-counters.js';
import type { MembershipStore } from './memberships.js';
import type { RefreshStore } from './refresh.js';
import type { RevocationStore } from './revocations.js';
import type { SsoStore } from './sso.js';
import type { TenantStore } from './tenants.js';
import type { UserStore } from './users.js';

export type { ApiKeyRecord, ApiKeyStore, NewApiKey } from './api-keys.js';
export type { BrowserSessionRecord, BrowserSessionStore } from './browser-sessions.js';
export type { ClientMaker, ClientRecord, ClientStore, NewClient } from './clients.js';
export type { DomainStore, TenantDomain } from './domains.js';
export type { IdpStore, TenantIdp } from './idps.js';
export type { InvitationRecord, InvitationStore } from './invitations.js';
export type { MemberRole, Membership, MembershipState, MembershipStore } from './memberships.js';
export {
  REFRESH_RECORD_MARGIN_SECONDS,
  REFRESH_USED_DIGESTS_KEPT,
  isLiveFamily,
  type FamilyToRotate,
  type RefreshFamily,
  type RefreshStore,
  type RotateRefreshInput,
  type RotateResult,
} from './refresh.js';
export type {
  RevocationLeases,
  RevocationStore,
  SessionEvent,
  SessionEventListener,
} from './revocations.js';
export type { SsoRecordKind, SsoStore } from './sso.js';
export type { TenantInput, TenantRecord, TenantStore, TenantType } from './tenants.js';
export type { IdpOrigin, NewUser, UserRecord, UserStore } from './users.js';

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

/** The store's slices, by name: what `Store` holds besides its own few operations. */
export interface StoreSlices {
  readonly users: UserStore;
  readonly tenants: TenantStore;
  readonly memberships: MembershipStore;
  readonly clients: ClientStore;
  readonly apiKeys: ApiKeyStore;
  readonly refresh: RefreshStore;
  readonly idps: IdpStore;
  readonly sso: SsoStore;
  readonly domains: DomainStore;
  readonly revocations: RevocationStore;
  readonly browserSessions: BrowserSessionStore;
  readonly invitations: InvitationStore;
}

/** The slices' names. */
export type StoreSliceName = keyof StoreSlices;

/**
 * The store: its slices (each written and read through `store.<slice>.<op>`),
 * and what belongs to no slice.
 */
export interface Store extends StoreSlices {
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
