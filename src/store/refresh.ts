/**
 * Refresh-token families (issue 33): what the store keeps of one login's
 * chain of refresh tokens, and the store methods over them: the refresh slice of
 * the store (`Store.refresh`). Both backends (`memory-refresh.ts`, `redis-refresh.ts`) are held
 * to the same behaviour by `test/store/store-contract-refresh.ts`.
 *
 * Times are Unix seconds (integers). A family's record is kept until its
 * absolute end or the last expiry of its access tokens, whichever is later,
 * plus {@link REFRESH_RECORD_MARGIN_SECONDS}; it then vanishes by itself.
 */

/**
 * One login's chain of refresh tokens (RFC 9700 §4.14.2 rotation). Secrets
 * are kept only as SHA-256 hex digests.
 */
export interface RefreshFamily {
  /** Random, public (it appears in audit events). */
  familyId: string;
  userId: string;
  tenantId: string;
  /** Space-separated, as granted at login. */
  scope: string;
  /** The user's session version at login (`sv`). */
  sessionVersion: number;
  /** The membership generation at login (`mg`). */
  membershipGeneration: number;
  /** Unix seconds. */
  createdAt: number;
  /** The family ends then, whatever the rotation. */
  absoluteExpiresAt: number;
  /** Digest of the one unused refresh token. */
  currentDigest: string;
  /** Idle expiry of the current token: it is refused from then on. */
  currentExpiresAt: number;
  /** The token used last, honoured again within the grace (see {@link RotateResult}). */
  previous?: { digest: string; usedAt: number; successorDigest: string };
  /** jti → exp of the family's access tokens not yet expired (when last pruned). */
  accessTokens: Record<string, number>;
  revoked: boolean;
  /**
   * The login's `User-Agent` (at most 256 characters) and client address, shown
   * to the user in their list of sessions (`GET /1/sessions`, issue 44) so they
   * can tell a login of theirs from a stranger's. Absent from a family stored
   * before issue 44 (listed as `null`) and from a login that sent none.
   */
  userAgent?: string;
  ip?: string;
}

/** What presenting a refresh token did (see `rotateRefreshToken`). */
export type RotateResult =
  /** The presented token was the current one: `successorDigest` is current now, the presented one `previous`. */
  | { outcome: 'rotated'; family: RefreshFamily }
  /**
   * The presented token was `previous` and was used at most `graceSeconds`
   * ago: nothing rotates, `previous.successorDigest` stays current (the one
   * live successor, whatever `successorDigest` was given: a caller hands its
   * successor out only when it is `family.currentDigest`), and the new jti
   * is added.
   */
  | { outcome: 'grace'; family: RefreshFamily }
  /**
   * The presented token was used before, outside the grace: the one used
   * last, or one of the {@link REFRESH_USED_DIGESTS_KEPT} used before it. The
   * family is revoked in the same atomic step; `family.accessTokens` lists
   * the jtis to deny-list.
   */
  | { outcome: 'reused'; family: RefreshFamily }
  /**
   * No such family, revoked, past its absolute end, the current token (or
   * the previous one within the grace) past the idle expiry, or a digest this
   * family never had (or used too long ago to remember). Nothing is written:
   * a family id is public (an access token's `fid`), so a well-formed token
   * for it proves nothing and must end nothing (issue 42).
   */
  | { outcome: 'invalid' };

/** A family with the key its successors are derived under (`getRefreshFamilyToRotate`). */
export interface FamilyToRotate {
  family: RefreshFamily;
  successorKey: string | null;
}

/** What `rotateRefreshToken` is given. */
export interface RotateRefreshInput {
  familyId: string;
  /** SHA-256 hex of the refresh token presented. */
  presentedDigest: string;
  /**
   * SHA-256 hex of the successor the caller would hand out. Derived from the
   * presented token under the family's successor key
   * ({@link RefreshStore.getRefreshFamilyToRotate}), so a repeat within
   * the grace hands out the same one (the store keeps the first as
   * `previous.successorDigest`).
   */
  successorDigest: string;
  /** Id of the access token issued with this refresh. */
  jti: string;
  /** Its `exp`. */
  accessExpiresAt: number;
  now: number;
  graceSeconds: number;
  /** On rotation the new current token lives until `min(now + idleTtlSeconds, absoluteExpiresAt)`. */
  idleTtlSeconds: number;
}

/**
 * How many used digests before `previous` a family remembers (newest kept):
 * a token used longer ago than that is `invalid` rather than `reused` — still
 * refused, only no longer a reason to end the family. At one rotation per
 * access-token lifetime that is days of history.
 */
export const REFRESH_USED_DIGESTS_KEPT = 100;

/** How long (seconds) a family's record outlives its end and its access tokens. */
export const REFRESH_RECORD_MARGIN_SECONDS = 60;

/**
 * The store methods over refresh families. Every method that ends or rotates
 * a family resolves only once a replica has the change (Sentinel, Cluster), as
 * other session writes do: a failover never brings a used token back.
 */
export interface RefreshStore {
  /**
   * Stores a new family with a successor key of its own (32 random bytes the
   * store makes; see {@link getRefreshFamilyToRotate}) and enters it in its
   * user's index, ending the user's families IN THE SAME TENANT that end
   * soonest (oldest, under one absolute lifetime) so that at most
   * `maxPerTenant` of them stay live, the new one among them: families in
   * other tenants never count (issue 42: sign-ins at one tenant never end a
   * session at another). Families past their absolute end (at
   * `family.createdAt`) leave the index without counting.
   * @returns the families this ended, each `revoked`, so the caller can
   * deny-list their access tokens.
   * @throws RangeError when `maxPerTenant` is not a positive integer.
   * @throws GatewayError `internal_error` when the family id is in use.
   */
  createRefreshFamily(family: RefreshFamily, maxPerTenant: number): Promise<RefreshFamily[]>;
  /**
   * Presents a refresh token, in ONE atomic step: decides the outcome (see
   * {@link RotateResult}), prunes `accessTokens` of entries with `exp < now`,
   * and on `rotated` sets `currentExpiresAt` to
   * `min(now + idleTtlSeconds, absoluteExpiresAt)`.
   */
  rotateRefreshToken(input: RotateRefreshInput): Promise<RotateResult>;
  /** The family as stored (revoked or not); null once its record is gone. */
  getRefreshFamily(familyId: string): Promise<RefreshFamily | null>;
  /**
   * The family and its successor key (base64url), for the refresh grant to
   * derive the successor of a presented token; never to be logged or
   * answered. The key is null for a family stored before keys existed (it
   * cannot be rotated safely: its chain was computable from any past token).
   */
  getRefreshFamilyToRotate(familyId: string): Promise<FamilyToRotate | null>;
  /**
   * Marks the family revoked (idempotent) and takes it out of its user's index.
   * @returns the family, for the caller to deny-list its access tokens; null
   * when there is none.
   */
  revokeRefreshFamily(familyId: string): Promise<RefreshFamily | null>;
  /**
   * Revokes every live family of the user (of `tenantId` only, when given),
   * through the user's index: no scan.
   * @returns the families this revoked (not those revoked before).
   */
  revokeRefreshFamiliesOf(userId: string, tenantId?: string): Promise<RefreshFamily[]>;
  /**
   * The user's live families ({@link isLiveFamily}), through the user's
   * index: no scan. For the user's list of sessions (issue 44); in no order.
   */
  listRefreshFamilies(userId: string): Promise<RefreshFamily[]>;
}

/**
 * Whether a family can still be used at `now` (Unix seconds): not revoked,
 * before its absolute end, and its current token not idle past its expiry
 * or one of its access tokens not yet expired.
 */
export function isLiveFamily(family: RefreshFamily, now: number): boolean {
  if (family.revoked || now >= family.absoluteExpiresAt) return false;
  return (
    now < family.currentExpiresAt || Object.values(family.accessTokens).some((exp) => exp > now)
  );
}
