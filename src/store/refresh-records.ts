/**
 * What both backends share of refresh families: the stored form (the family,
 * its successor key and the digests it used before `previous`), when a record may vanish, and the checks of what
 * callers pass. The Redis store keeps the stored form as
 * one JSON string, read and written by its Lua scripts
 * (`redis-refresh-scripts.ts`) under the same field names.
 */
import { randomBytes } from 'node:crypto';
import { GatewayError } from '../errors.js';
import {
  REFRESH_RECORD_MARGIN_SECONDS,
  type FamilyToRotate,
  type RefreshFamily,
  type RotateRefreshInput,
} from './refresh.js';

/**
 * A family as stored: the family, the key its successors are derived under
 * (base64url of 32 random bytes; absent from a record stored before issue 42,
 * whose chain any past token computed), and the digests it used before its
 * `previous`, oldest first (at most `REFRESH_USED_DIGESTS_KEPT`): a
 * replay of one is reuse, a digest not among them is not (`refresh-rotation.ts`).
 */
export interface StoredRefreshFamily extends RefreshFamily {
  successorKey?: string;
  used: string[];
}

/**
 * When (Unix seconds) a family's record may vanish: past its absolute end
 * and the expiry of every access token of it, so a revocation can still name
 * them, plus a margin for clocks.
 */
export function refreshRecordExpiry(family: RefreshFamily): number {
  return (
    Math.max(family.absoluteExpiresAt, ...Object.values(family.accessTokens)) +
    REFRESH_RECORD_MARGIN_SECONDS
  );
}

/**
 * The family without what only the store keeps (its successor key and its
 * `used` digests), as a copy.
 */
export function publicFamily(stored: RefreshFamily): RefreshFamily {
  const copy: RefreshFamily = {
    familyId: stored.familyId,
    userId: stored.userId,
    tenantId: stored.tenantId,
    scope: stored.scope,
    sessionVersion: stored.sessionVersion,
    membershipGeneration: stored.membershipGeneration,
    createdAt: stored.createdAt,
    absoluteExpiresAt: stored.absoluteExpiresAt,
    currentDigest: stored.currentDigest,
    currentExpiresAt: stored.currentExpiresAt,
    accessTokens: { ...stored.accessTokens },
    revoked: stored.revoked,
  };
  if (stored.previous !== undefined) copy.previous = { ...stored.previous };
  if (stored.userAgent !== undefined) copy.userAgent = stored.userAgent;
  if (stored.ip !== undefined) copy.ip = stored.ip;
  return copy;
}

/** The family and its successor key (null for a record stored without one). */
export function familyToRotate(stored: StoredRefreshFamily): FamilyToRotate {
  return { family: publicFamily(stored), successorKey: stored.successorKey ?? null };
}

/**
 * A new family's stored form, copied from what the caller gave, with a new
 * successor key and nothing used yet.
 */
export function storedFamily(family: RefreshFamily): StoredRefreshFamily {
  return {
    ...publicFamily(family),
    successorKey: randomBytes(32).toString('base64url'),
    used: [],
  };
}

/** @throws RangeError unless `maxPerTenant` is a positive integer. */
export function checkMaxPerTenant(maxPerTenant: number): void {
  if (!Number.isSafeInteger(maxPerTenant) || maxPerTenant < 1) {
    throw new RangeError('maxPerTenant must be a positive integer.');
  }
}

export function familyIdTaken(): GatewayError {
  return new GatewayError('internal_error', 'The refresh family id is already in use.');
}

/**
 * The order in which a user's families in a tenant are ended past the cap: soonest
 * absolute end first, then by id (as a Redis sorted set orders them).
 */
export function endsSooner(
  a: { familyId: string; absoluteExpiresAt: number },
  b: { familyId: string; absoluteExpiresAt: number },
): number {
  if (a.absoluteExpiresAt !== b.absoluteExpiresAt) return a.absoluteExpiresAt - b.absoluteExpiresAt;
  return a.familyId < b.familyId ? -1 : a.familyId > b.familyId ? 1 : 0;
}

/**
 * @throws RangeError unless every time and count of a rotation is a whole
 * number (Redis keeps them in JSON through Lua, whose numbers print 14 digits).
 */
export function checkRotationInput(input: RotateRefreshInput): void {
  const { accessExpiresAt, now, graceSeconds, idleTtlSeconds } = input;
  checkWhole({ accessExpiresAt, now, graceSeconds, idleTtlSeconds });
}

/** @throws RangeError unless every time of the family is a whole number of seconds. */
export function checkFamilyTimes(family: RefreshFamily): void {
  const { createdAt, absoluteExpiresAt, currentExpiresAt, sessionVersion } = family;
  checkWhole({ createdAt, absoluteExpiresAt, currentExpiresAt, sessionVersion });
  checkWhole({ membershipGeneration: family.membershipGeneration, ...family.accessTokens });
  if (family.previous !== undefined) checkWhole({ usedAt: family.previous.usedAt });
}

function checkWhole(values: Record<string, number>): void {
  for (const [name, value] of Object.entries(values)) {
    if (!Number.isSafeInteger(value)) throw new RangeError(`${name} must be a whole number.`);
  }
}
