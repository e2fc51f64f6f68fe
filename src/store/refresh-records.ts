/**
 * What both backends share of refresh families: the stored form (the family
 * and the digests it used before `previous`), when a record may vanish, and
 * the checks of what callers pass. The Redis store keeps the stored form as
 * one JSON string, read and written by its Lua scripts
 * (`redis-refresh-scripts.ts`) under the same field names.
 */
import { GatewayError } from '../errors.js';
import {
  REFRESH_RECORD_MARGIN_SECONDS,
  type RefreshFamily,
  type RotateRefreshInput,
} from './refresh-types.js';

/** A family as stored: the family and the digests used before its `previous`, oldest first. */
export interface StoredRefreshFamily extends RefreshFamily {
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

/** The family without what only the store keeps, as a copy. */
export function publicFamily(stored: StoredRefreshFamily): RefreshFamily {
  const { used: _used, ...family } = stored;
  const copy: RefreshFamily = { ...family, accessTokens: { ...family.accessTokens } };
  if (family.previous !== undefined) copy.previous = { ...family.previous };
  return copy;
}

/** A new family's stored form (nothing used yet), copied from what the caller gave. */
export function storedFamily(family: RefreshFamily): StoredRefreshFamily {
  return { ...publicFamily({ ...family, used: [] }), used: [] };
}

/** @throws RangeError unless `maxPerUser` is a positive integer. */
export function checkMaxPerUser(maxPerUser: number): void {
  if (!Number.isSafeInteger(maxPerUser) || maxPerUser < 1) {
    throw new RangeError('maxPerUser must be a positive integer.');
  }
}

export function familyIdTaken(): GatewayError {
  return new GatewayError('internal_error', 'The refresh family id is already in use.');
}

/**
 * The order in which a user's families are ended past the cap: soonest
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
