/**
 * The rotation rule of refresh families (RFC 9700 §4.14.2), as the memory
 * store applies it. The Redis store applies the same rule in Lua
 * (`redis-refresh-scripts.ts`); the contract suite holds both to it.
 */
import type { RotateRefreshInput } from './refresh-types.js';
import type { StoredRefreshFamily } from './refresh-records.js';

export type RotationOutcome = 'rotated' | 'grace' | 'reused' | 'invalid';

/**
 * What presenting `input.presentedDigest` to `family` means; decides only.
 * Any token of a live family but its current one and the one used last
 * within the grace is reuse: an older token, or one the family never had —
 * a well-formed token for the family's id that is not one of its own is a
 * guess at the chain, and ends the family as a replay does (issue 42).
 */
export function rotationOutcome(
  family: StoredRefreshFamily,
  input: RotateRefreshInput,
): RotationOutcome {
  const { now, presentedDigest } = input;
  if (family.revoked || now >= family.absoluteExpiresAt) return 'invalid';
  const idle = now >= family.currentExpiresAt;
  if (presentedDigest === family.currentDigest) return idle ? 'invalid' : 'rotated';
  const previous = family.previous;
  if (previous !== undefined && presentedDigest === previous.digest) {
    if (now - previous.usedAt > input.graceSeconds) return 'reused';
    return idle ? 'invalid' : 'grace';
  }
  return 'reused';
}

/**
 * Applies a decided outcome but `invalid` to `family` in place: prunes
 * access tokens past `now`, then rotates, adds the new jti, or revokes.
 */
export function applyRotation(
  family: StoredRefreshFamily,
  outcome: Exclude<RotationOutcome, 'invalid'>,
  input: RotateRefreshInput,
): void {
  const { now } = input;
  family.accessTokens = Object.fromEntries(
    Object.entries(family.accessTokens).filter(([, exp]) => exp >= now),
  );
  if (outcome === 'reused') {
    family.revoked = true;
    return;
  }
  if (outcome === 'rotated') {
    family.previous = {
      digest: input.presentedDigest,
      usedAt: now,
      successorDigest: input.successorDigest,
    };
    family.currentDigest = input.successorDigest;
    family.currentExpiresAt = Math.min(now + input.idleTtlSeconds, family.absoluteExpiresAt);
  }
  family.accessTokens[input.jti] = input.accessExpiresAt;
}
