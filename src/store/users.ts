/**
 * The users slice of the store (`Store.users`): accounts, their password
 * hashes and session versions. Implemented by `memory-users.ts` and
 * `redis-users.ts`.
 */
import type { TenantRecord } from './tenants.js';

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
   * (`auth/passwords/no-password.ts`) until one is set.
   */
  createdByIdp?: IdpOrigin;
  /**
   * When the user proved they receive mail at `email` (Unix seconds): a mailed
   * link followed, an identity provider's verified e-mail, or the operator's
   * word (`user add --verified`, the seed's `email_verified`). Absent: never
   * proven — such an address is never linked by an IdP, and with
   * `signup.verifyEmail` its password does not sign in (`email_not_verified`).
   */
  emailVerifiedAt?: number;
}

/** A tenant's identity provider, as it was when it created a user. */
export interface IdpOrigin {
  tenantId: string;
  issuer: string;
}

export interface NewUser {
  id: string;
  email: string;
  name?: string;
  passwordHash: string;
  createdAt: number;
  createdByIdp?: IdpOrigin;
  /** Unix seconds; absent: the address is not verified yet. */
  emailVerifiedAt?: number;
  /** Created in the same atomic write as the user, with the user as its only member. */
  personalTenant: TenantRecord;
}

export interface UserStore {
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
   * Replaces the hash and bumps the session version in one atomic step. With
   * `ifVersion`, only while the session version is still that one (a password
   * set meanwhile wins: of concurrent writers with one version, one writes).
   * @returns the new session version, or null when the user does not exist
   * (or, with `ifVersion`, has another version: nothing written).
   */
  setPasswordHash(userId: string, passwordHash: string, ifVersion?: number): Promise<number | null>;
  /**
   * Replaces the hash without ending sessions (rehash at a higher cost after a
   * successful login). Only applies if the stored hash is still `expectedHash`.
   */
  replacePasswordHash(userId: string, expectedHash: string, passwordHash: string): Promise<boolean>;
  /**
   * Marks the user's e-mail verified at `at` (Unix seconds) unless it already
   * is (the first time is kept).
   * @returns false when the user does not exist.
   */
  markEmailVerified(userId: string, at: number): Promise<boolean>;
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
}
