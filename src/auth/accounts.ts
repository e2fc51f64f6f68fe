/**
 * Accounts: signing up, logging in with an e-mail and password, changing a
 * password, and granting an access token for one of the user's tenants.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { GatewayError } from '../errors.js';
import { normaliseEmail } from '../store/normalise.js';
import type { IdpOrigin, MemberRole, Store, TenantRecord, UserRecord } from '../store/types.js';
import { basicCanCarryUserId } from './credentials/basic.js';
import type { BruteForceGuard, LoginOutcome } from './passwords/brute-force.js';
import { disabledHash, enabledHash, isDisabledHash } from './revocation/disabled.js';
import { checkCreatable, type Creator } from './federation/managed-addresses.js';
import { hasNoPassword } from './passwords/no-password.js';
import { memberAccess } from './member-access.js';
import { checkPasswordPolicy, type PasswordHasher } from './passwords/passwords.js';
import {
  issueAccessToken,
  type AccessTokenClaims,
  type KeyRing,
  type TokenSettings,
} from './tokens/tokens.js';

const emailSchema = z.email();

/** Tenant ids are DNS labels (so a host pattern can carry them), `current` excepted. */
export function isValidTenantId(id: string): boolean {
  return /^[a-z0-9](?:[a-z0-9_-]{0,62})$/.test(id) && id !== 'current';
}

/** @throws GatewayError `invalid_request` */
export function checkEmail(email: string): string {
  const normalized = normaliseEmail(email);
  // basicCanCarryUserId: an address Basic could not carry could never log in.
  if (
    normalized.length > 254 ||
    !basicCanCarryUserId(normalized) ||
    !emailSchema.safeParse(normalized).success
  ) {
    throw new GatewayError('invalid_request', 'The e-mail address is not valid.');
  }
  return normalized;
}

/** What each membership role grants (`authorization.roles`); a config reload replaces `current`. */
export interface RoleScopes {
  current: Readonly<Record<MemberRole, readonly string[]>>;
}

export interface AccountDeps {
  store: Store;
  /** The scopes a token carries for the member's role; omitted: none for any role. */
  roles?: RoleScopes;
  passwords: PasswordHasher;
  keyring: KeyRing;
  tokens: TokenSettings;
  /** `cloud_region` of new personal tenants. */
  cloudRegion: string;
  bruteForce: BruteForceGuard;
  now?: () => number;
}

/** What a person proves who they are with: from Basic credentials or the sign-in page's form alike. */
export interface PasswordCredentials {
  email: string;
  password: string;
}

export interface GrantedToken {
  token: string;
  claims: AccessTokenClaims;
  user: UserRecord;
  tenant: TenantRecord;
}

export interface Accounts {
  /**
   * Creates a user with its personal tenant. An address of a domain a tenant
   * has verified only by the operator or that tenant's provider
   * (`managed-addresses.ts`).
   * @throws `user_exists`, `invalid_request`, `forbidden`
   */
  signUp(input: {
    email: string;
    password?: string;
    passwordHash?: string;
    name?: string;
    /** The tenant identity provider creating the user at its first sign-in. */
    createdByIdp?: IdpOrigin;
    /** The operator's CLI or seed: may create an address of any domain. */
    byOperator?: boolean;
    /**
     * The address is verified from the start: the operator's word (`user add
     * --verified`, the seed's `email_verified`) or the provider's `email_verified`.
     */
    emailVerified?: boolean;
  }): Promise<UserRecord>;
  /**
   * E-mail and password → user, or `invalid_credentials` (same answer and
   * the same bcrypt work for an unknown e-mail and a wrong password);
   * `too_many_requests` while locked out. The one password check: the Basic
   * login and the sign-in page both call it, so they share limits and timing.
   */
  logIn(
    credentials: PasswordCredentials,
    clientIp: string,
    signal?: AbortSignal,
  ): Promise<UserRecord>;
  /**
   * New hash, and every token issued before now is refused. With
   * `unlessChanged`, only while the user's session version is still
   * `user.sessionVersion` (a one-time link's: of concurrent changes one wins).
   * @returns false when `unlessChanged` and the password was set meanwhile (nothing written)
   */
  changePassword(
    user: UserRecord,
    password: string,
    options?: { unlessChanged?: boolean },
  ): Promise<boolean>;
  /**
   * Disables (logins refused as a wrong password would be, every token
   * refused on every instance before this resolves) or enables the user.
   * @returns false when the user already was so.
   */
  setDisabled(user: UserRecord, disabled: boolean): Promise<boolean>;
  /**
   * `familyId`: the refresh family the token begins (its `fid` claim).
   * @throws `tenant_access_denied` when the tenant does not exist or the user is not a member.
   */
  grantToken(user: UserRecord, tenantId: string, familyId?: string): Promise<GrantedToken>;
}

type SignupInput = Parameters<Accounts['signUp']>[0];

export function createAccounts(deps: AccountDeps): Accounts {
  const { store, passwords } = deps;
  const now = deps.now ?? (() => Math.floor(Date.now() / 1000));

  return {
    signUp: (input) => signUp(deps, now, input),
    logIn: (credentials, clientIp, signal) => logIn(deps, credentials, clientIp, signal),

    async changePassword(user, password, options) {
      checkPasswordPolicy(password);
      const hash = await passwords.hash(password);
      // A disabled user stays disabled (the CLI can set the password of one).
      const stored = isDisabledHash(user.passwordHash) ? disabledHash(hash) : hash;
      const ifVersion = options?.unlessChanged === true ? user.sessionVersion : undefined;
      const version = await store.users.setPasswordHash(user.id, stored, ifVersion);
      if (version !== null) return true;
      if (ifVersion !== undefined && (await store.users.getUser(user.id)) !== null) return false;
      throw new GatewayError('invalid_credentials', 'The user no longer exists.');
    },

    async setDisabled(user, disabled) {
      if (isDisabledHash(user.passwordHash) === disabled) return false;
      const hash = disabled ? disabledHash(user.passwordHash) : enabledHash(user.passwordHash);
      const version = await store.users.setPasswordHash(user.id, hash);
      if (version === null)
        throw new GatewayError('invalid_credentials', 'The user no longer exists.');
      return true;
    },

    grantToken: (user, tenantId, familyId) => grantToken(deps, now(), user, tenantId, familyId),
  };
}

async function signUp(
  deps: AccountDeps,
  now: () => number,
  input: SignupInput,
): Promise<UserRecord> {
  const email = checkEmail(input.email);
  await checkCreatable(deps.store, email, creatorOf(input));
  let passwordHash: string;
  if (input.passwordHash !== undefined) passwordHash = input.passwordHash;
  else {
    checkPasswordPolicy(input.password ?? '');
    passwordHash = await deps.passwords.hash(input.password as string);
  }
  const createdAt = now();
  const name = input.name?.trim() || undefined;
  return deps.store.users.createUser({
    id: randomUUID(),
    email,
    ...(name === undefined ? {} : { name }),
    passwordHash,
    createdAt,
    ...(input.createdByIdp === undefined ? {} : { createdByIdp: input.createdByIdp }),
    ...(input.emailVerified === true ? { emailVerifiedAt: createdAt } : {}),
    personalTenant: {
      tenantId: randomUUID(),
      type: 'usertenant',
      name: name ?? email,
      createdAt,
      modifiedAt: createdAt,
      cloudRegion: deps.cloudRegion,
      createdBy: email,
    },
  });
}

function creatorOf(input: SignupInput): Creator {
  if (input.createdByIdp !== undefined) return { idp: input.createdByIdp };
  return input.byOperator === true ? 'operator' : 'anyone';
}

async function logIn(
  { store, passwords, bruteForce }: AccountDeps,
  credentials: PasswordCredentials,
  clientIp: string,
  signal: AbortSignal | undefined,
): Promise<UserRecord> {
  const email = normaliseEmail(credentials.email);
  // Points are taken before any bcrypt work (else concurrent guesses all
  // pass the check before any is counted), and the queue
  // place is held until this login's bcrypt work is done.
  const attempt = await bruteForce.beginLogin(email, clientIp);
  let outcome: LoginOutcome = 'abandoned';
  try {
    const user = await store.users.findUserByEmail(email);
    // A disabled user costs the same bcrypt work as an unknown e-mail, and gets the same answer.
    // So does a user with no password (created by a tenant's identity provider).
    const usable =
      user === null || isDisabledHash(user.passwordHash) || hasNoPassword(user.passwordHash)
        ? undefined
        : user.passwordHash;
    const ok = await passwords.verify(credentials.password, usable, signal);
    if (!ok || user === null) {
      outcome = 'failed';
      throw new GatewayError('invalid_credentials', 'The e-mail or password is wrong.');
    }
    outcome = 'succeeded';
    if (passwords.needsRehash(user.passwordHash)) {
      // Upgrade the hash to the configured cost; sessions stay as they are.
      const upgraded = await passwords.hash(credentials.password);
      await store.users.replacePasswordHash(user.id, user.passwordHash, upgraded);
    }
    return user;
  } finally {
    await attempt.end(outcome);
  }
}

async function grantToken(
  { store, keyring, tokens, roles }: AccountDeps,
  at: number,
  user: UserRecord,
  tenantId: string,
  familyId: string | undefined,
): Promise<GrantedToken> {
  const { tenant, membership, role } = await memberAccess(store, tenantId, user.id);
  const { token, claims } = await issueAccessToken(
    keyring,
    tokens,
    {
      userId: user.id,
      email: user.email,
      sessionVersion: user.sessionVersion,
      tenantId: tenant.tenantId,
      tenantType: tenant.type,
      membershipGeneration: membership.generation,
      scope: scopeClaim(roles?.current[role] ?? []),
      ...(familyId === undefined ? {} : { familyId }),
    },
    at,
  );
  return { token, claims, user, tenant };
}

/** Scopes as a `scope` claim: each once, sorted, space-separated (RFC 6749 §3.3). */
export function scopeClaim(scopes: readonly string[]): string {
  return [...new Set(scopes)].sort().join(' ');
}
