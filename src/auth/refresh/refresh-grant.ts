/**
 * Refresh tokens (`tokens.refresh`, docs/identity-api.md#refresh-tokens): a
 * family begins at a Basic login and is rotated at each refresh (RFC 6749 §6,
 * RFC 9700 §4.14.2). The store rotates atomically; this module decides
 * around it: whether the family's session is still alive, what access token
 * to issue, and what a reuse ends.
 *
 * - Scopes: a refresh issues the scopes the member's role has NOW (the live
 *   `authorization.roles`, a reload included) that the family was granted:
 *   a scope taken from the role is gone from the next refreshed token
 *   (issue 42), and a scope added to it waits for the next login.
 * - Liveness: a family is as alive as a token issued at its login would be:
 *   the user's session version and the membership's generation are the ones
 *   it began under, and the user is not disabled. A password change, a user
 *   disabled or removed, a membership removed or its role changed, a tenant
 *   removed — each moves one of them, so each ends the family at its next use.
 * - Grace: a token presented again within {@link REFRESH_GRACE_SECONDS} of its
 *   rotation gets a new access token and the same successor (the successor is
 *   derived from it under the family's successor key, which only the store
 *   holds, `refresh-tokens.ts`); later, an older token of the family is
 *   reuse. A well-formed token for the family's id that was never one of its
 *   own is refused and ends nothing: the family id is public (every access
 *   token's `fid`), the checksum too, and without the key a made-up token is
 *   no step of the chain (issue 42: counting it as reuse let anyone who saw an
 *   access token log its user out). A family stored without a successor key
 *   (before issue 42) is ended at its next refresh with a token of its own:
 *   the user logs in again.
 * - Reuse revokes the family and deny-lists every access token issued in it
 *   through the revocation path (in lease mode confirmed by every instance)
 *   before the answer.
 */
import { GatewayError } from '../../errors.js';
import type {
  MemberRole,
  RefreshFamily,
  Store,
  TenantRecord,
  UserRecord,
} from '../../store/types.js';
import type { GrantedToken, RoleScopes } from '../accounts.js';
import { scopeClaim, type Accounts } from '../accounts.js';
import { isDisabledHash } from '../revocation/disabled.js';
import {
  newRefreshFamily,
  parseRefreshToken,
  refreshDigest,
  successorOf,
  type ParsedRefreshToken,
} from './refresh-tokens.js';
import {
  issueAccessToken,
  type AccessTokenClaims,
  type KeyRing,
  type TokenSettings,
} from '../tokens/tokens.js';

export type { RefreshFamily };

/** How long a used refresh token still gets its successor (two tabs, a retry after a lost answer). */
export const REFRESH_GRACE_SECONDS = 10;
/**
 * A user's live families (logins with refresh) in one tenant; a new one past
 * this ends the oldest of that tenant, never one of another tenant (issue 42).
 */
export const MAX_FAMILIES_PER_TENANT = 50;

export interface RefreshSettings {
  enabled: boolean;
  ttlSeconds: number;
  absoluteTtlSeconds: number;
}

/** What became of a refresh: the label of `tenant_gateway_refreshes_total`. */
export const REFRESH_OUTCOMES = ['rotated', 'grace', 'reused', 'invalid'] as const;
export type RefreshOutcome = (typeof REFRESH_OUTCOMES)[number];

export interface RefreshDeps {
  store: Store;
  accounts: Accounts;
  keyring: KeyRing;
  tokens: TokenSettings & { refresh: RefreshSettings };
  /** What each role grants now (`authorization.roles`; a reload replaces `current`). */
  roleScopes: RoleScopes;
  /** Unix seconds (tests move it past the grace). */
  now?: () => number;
}

/** A refresh that succeeded: the new access token, the successor, and whose they are. */
export interface Refreshed {
  outcome: 'rotated' | 'grace';
  token: string;
  claims: AccessTokenClaims;
  refreshToken: string;
  user: UserRecord;
  tenant: TenantRecord;
}

/** A refresh refused, and what the caller should record of it. */
export class RefreshRefused extends GatewayError {
  constructor(
    readonly outcome: 'reused' | 'invalid',
    readonly family?: RefreshFamily,
  ) {
    super(
      'invalid_grant',
      outcome === 'reused'
        ? 'The refresh token was already used; its sessions have been ended.'
        : 'The refresh token is not valid, has expired, or its session has ended.',
      { detail: outcome },
    );
  }
}

/** The longest `User-Agent` a family keeps (a longer one is cut): it is shown, never parsed. */
export const MAX_USER_AGENT_CHARS = 256;

/**
 * Where a login came from, kept with its family so its user can tell their
 * sessions apart (`GET /1/sessions`, issue 44). Both are what the client
 * said or the address it came from: shown as text, never trusted.
 */
export interface LoginOrigin {
  userAgent?: string | undefined;
  ip?: string | undefined;
}

export interface RefreshTokens {
  /** Whether `tokens.refresh.enabled`. */
  readonly enabled: boolean;
  /** A Basic login's token, beginning a family: the access token and the family's first refresh token. */
  begin(
    user: UserRecord,
    tenantId: string,
    from?: LoginOrigin,
  ): Promise<GrantedToken & { refreshToken: string }>;
  /** @throws RefreshRefused (`invalid_grant`); GatewayError `invalid_scope` */
  refresh(refreshToken: string, scope: string | undefined): Promise<Refreshed>;
  /** Ends a family and every access token issued in it, on every instance; null when there was none. */
  endFamily(familyId: string): Promise<RefreshFamily | null>;
  /**
   * RFC 7009: ends the family of a refresh token that is one of its own — the
   * current token or the one just rotated — and null for any other string (a
   * made-up token for a family id learnt from an access token's `fid` ends
   * nothing, here as at the token endpoint).
   */
  revokeByToken(refreshToken: string): Promise<RefreshFamily | null>;
}

export function createRefreshTokens(deps: RefreshDeps): RefreshTokens {
  const now = deps.now ?? (() => Math.floor(Date.now() / 1000));
  const endFamily = async (familyId: string) => {
    const family = await deps.store.refresh.revokeRefreshFamily(familyId);
    if (family !== null) await denyAccessTokens(deps, family, now());
    return family;
  };
  return {
    enabled: deps.tokens.refresh.enabled,
    begin: (user, tenantId, from) => begin(deps, now(), user, tenantId, from),
    refresh: (token, scope) => refresh(deps, now(), token, scope, endFamily),
    endFamily,
    async revokeByToken(token) {
      const presented = parseRefreshToken(token);
      if (presented === null) return null;
      const family = await deps.store.refresh.getRefreshFamily(presented.familyId);
      if (family === null || !isOfFamily(presented, family)) return null;
      return endFamily(family.familyId);
    },
  };
}

async function begin(
  deps: RefreshDeps,
  at: number,
  user: UserRecord,
  tenantId: string,
  from: LoginOrigin = {},
): Promise<GrantedToken & { refreshToken: string }> {
  const { familyId, token: refreshToken } = newRefreshFamily();
  const granted = await deps.accounts.grantToken(user, tenantId, familyId);
  const { claims } = granted;
  const { ttlSeconds, absoluteTtlSeconds } = deps.tokens.refresh;
  const evicted = await deps.store.refresh.createRefreshFamily(
    {
      familyId,
      userId: user.id,
      tenantId: claims.tenant_id,
      scope: claims.scope ?? '',
      sessionVersion: claims.sv,
      membershipGeneration: claims.mg,
      createdAt: at,
      absoluteExpiresAt: at + absoluteTtlSeconds,
      currentDigest: refreshDigest(refreshToken),
      currentExpiresAt: Math.min(at + ttlSeconds, at + absoluteTtlSeconds),
      accessTokens: { [claims.jti]: claims.exp },
      revoked: false,
      ...(from.userAgent === undefined
        ? {}
        : { userAgent: from.userAgent.slice(0, MAX_USER_AGENT_CHARS) }),
      ...(from.ip === undefined ? {} : { ip: from.ip }),
    },
    MAX_FAMILIES_PER_TENANT,
  );
  await Promise.all(evicted.map((family) => denyAccessTokens(deps, family, at)));
  return { ...granted, refreshToken };
}

async function refresh(
  deps: RefreshDeps,
  at: number,
  refreshToken: string,
  scope: string | undefined,
  endFamily: (familyId: string) => Promise<RefreshFamily | null>,
): Promise<Refreshed> {
  const presented = parseRefreshToken(refreshToken);
  if (presented === null) throw new RefreshRefused('invalid');
  const found = await deps.store.refresh.getRefreshFamilyToRotate(presented.familyId);
  if (found === null || found.family.revoked || found.family.absoluteExpiresAt <= at)
    throw new RefreshRefused('invalid', found?.family);
  const { family, successorKey } = found;
  const session = await liveSession(deps.store, family);
  // A family stored without a successor key had a chain any past token
  // computed: ended, as one whose session ended is — by a token of its own,
  // never by one made up for its public id (issue 42).
  if (session === null || successorKey === null) {
    if (isOfFamily(presented, family)) await endFamily(family.familyId);
    throw new RefreshRefused('invalid', family);
  }
  const successor = successorOf(presented, successorKey);
  const { token, claims } = await issueAccessToken(
    deps.keyring,
    deps.tokens,
    {
      userId: family.userId,
      email: session.user.email,
      sessionVersion: family.sessionVersion,
      tenantId: family.tenantId,
      tenantType: session.tenant.type,
      membershipGeneration: family.membershipGeneration,
      scope: narrowedScope(heldScope(deps, family, session.role), scope),
      familyId: family.familyId,
    },
    at,
  );
  const successorDigest = refreshDigest(successor.token);
  const rotation = await deps.store.refresh.rotateRefreshToken({
    familyId: family.familyId,
    presentedDigest: refreshDigest(presented.token),
    successorDigest,
    jti: claims.jti,
    accessExpiresAt: claims.exp,
    now: at,
    graceSeconds: REFRESH_GRACE_SECONDS,
    idleTtlSeconds: deps.tokens.refresh.ttlSeconds,
  });
  if (rotation.outcome === 'reused') {
    await denyAccessTokens(deps, rotation.family, at);
    throw new RefreshRefused('reused', rotation.family);
  }
  // Only the family's one live successor is handed out.
  if (rotation.outcome === 'invalid' || rotation.family.currentDigest !== successorDigest)
    throw new RefreshRefused('invalid');
  const { user, tenant } = session;
  return { outcome: rotation.outcome, token, claims, refreshToken: successor.token, user, tenant };
}

/**
 * What a refresh may issue: the family's scopes that the member's role still
 * grants in the live config (a reload may have taken some away).
 */
function heldScope(deps: RefreshDeps, family: RefreshFamily, role: MemberRole): string {
  const granted = new Set(deps.roleScopes.current[role] ?? []);
  return scopeClaim(family.scope.split(' ').filter((s) => s !== '' && granted.has(s)));
}

/**
 * Whether the token is the family's current one or the one just rotated. An
 * older one is already refused, so revoking by it is not needed — and
 * recognising it would mean walking the successor chain, work a stranger
 * could ask for with a made-up token.
 */
function isOfFamily(presented: ParsedRefreshToken, family: RefreshFamily): boolean {
  const digest = refreshDigest(presented.token);
  return digest === family.currentDigest || digest === family.previous?.digest;
}

/** The user, tenant and member's role when the family's session is alive; null when it has ended. */
async function liveSession(
  store: Store,
  family: RefreshFamily,
): Promise<{ user: UserRecord; tenant: TenantRecord; role: MemberRole } | null> {
  const [user, tenant, membership, role] = await Promise.all([
    store.users.getUser(family.userId),
    store.tenants.getTenant(family.tenantId),
    store.memberships.membershipForToken(family.tenantId, family.userId),
    store.memberships.getMemberRole(family.tenantId, family.userId),
  ]);
  // Read together: a role changed in between may be read with the old
  // generation, but what it grants is cut to the family's scopes, and the
  // token's generation is refused (and the family ended at its next use).
  const alive =
    user !== null &&
    !isDisabledHash(user.passwordHash) &&
    user.sessionVersion === family.sessionVersion &&
    tenant !== null &&
    membership !== null &&
    role !== null &&
    membership.generation === family.membershipGeneration;
  return alive ? { user, tenant, role } : null;
}

/**
 * The scope of a refreshed access token: what the family still holds, or the
 * part of it a `scope` parameter asks for (RFC 6749 §6: it may narrow, never
 * widen).
 * @throws GatewayError `invalid_scope`
 */
export function narrowedScope(granted: string, requested: string | undefined): string {
  const asked = (requested ?? '').split(' ').filter((s) => s !== '');
  if (asked.length === 0) return granted;
  const held = new Set(granted.split(' '));
  if (asked.some((s) => !held.has(s)))
    throw new GatewayError('invalid_scope', 'A requested scope is not granted to this session.');
  return scopeClaim(asked);
}

/**
 * Deny-lists the family's access tokens that can still verify (the store's
 * revocation is confirmed by every instance in lease mode before it resolves).
 */
async function denyAccessTokens(
  deps: RefreshDeps,
  family: RefreshFamily,
  at: number,
): Promise<void> {
  const skew = deps.tokens.clockSkewSeconds;
  const live = Object.entries(family.accessTokens).filter(([, exp]) => exp + skew > at);
  await Promise.all(live.map(([jti, exp]) => deps.store.revocations.revokeToken(jti, exp + skew)));
}
