/**
 * The memberships slice of the store (`Store.memberships`): who belongs
 * to which tenant, with which role, at which generation. Implemented by
 * `memory-memberships.ts` and `redis-memberships.ts`.
 */
import type { TenantRecord } from './tenants.js';

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

/** A member of a tenant as its admins see them (`listMemberships`). */
export interface MemberEntry {
  userId: string;
  role: MemberRole;
  /**
   * When the membership began (Unix seconds); null for one made before the
   * store kept it (issue 45): the store never guesses a date.
   */
  joinedAt: number | null;
}

/**
 * What `removeMember` and `setMemberRole` answer when `keepAnAdmin` refused
 * the change: it would have left the tenant without an admin. Nothing was
 * written, no generation taken, no event published.
 */
export const LAST_ADMIN = 'last-admin';
export type LastAdmin = typeof LAST_ADMIN;

/** How a membership change may be bounded. */
export interface MemberChangeOptions {
  /**
   * Refuse ({@link LAST_ADMIN}) a change that would leave the tenant without
   * an admin — the member is an admin and no other member is (roles counted
   * as `listMemberships` reads them). Checked and written in one atomic step,
   * so two changes at once cannot both pass. Without it, the last admin may
   * go (the operator's verbs).
   */
  keepAnAdmin?: boolean;
}

export interface MembershipStore {
  /**
   * Idempotent; a new membership takes a new generation, keeps when it began
   * (`joinedAt`, now) and publishes `membership-added`. Its role is `role`, by default `admin` for the
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
   * @returns whether a membership was removed; {@link LAST_ADMIN} when
   * `options.keepAnAdmin` refused it.
   */
  removeMember(
    tenantId: string,
    userId: string,
    options?: MemberChangeOptions,
  ): Promise<boolean | LastAdmin>;
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
  /** The tenant's members with their roles and when each joined, sorted by user id. */
  listMemberships(tenantId: string): Promise<MemberEntry[]>;
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
   * @returns whether the role changed; null when the user is not a member;
   * {@link LAST_ADMIN} when `options.keepAnAdmin` refused the change.
   */
  setMemberRole(
    tenantId: string,
    userId: string,
    role: MemberRole,
    options?: MemberChangeOptions,
  ): Promise<boolean | null | LastAdmin>;
}
