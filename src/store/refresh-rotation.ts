/**
 * The rotation rule of refresh families (RFC 9700 §4.14.2), as the memory
 * store applies it. The Redis store applies the same rule in Lua
 * (`redis-refresh-scripts.ts`); the contract suite holds both to it.
 */
import { REFRESH_USED_DIGESTS_KEPT, type RotateRefreshInput } from './refresh.js';
import type { StoredRefreshFamily } from './refresh-records.js';

export type RotationOutcome = 'rotated' | 'grace' | 'reused' | 'invalid';

/**
 * What presenting `input.presentedDigest` to `family` means; decides only.
 * A token the family had — the one used last (past the grace) or one of the
 * {@link REFRESH_USED_DIGESTS_KEPT} before it — is reuse. A digest the family
 * never had is `invalid` and ends nothing: a family id is public (every access
 * token's `fid`) and the checksum too, so anyone can build a well-formed
 * token for it; counting that as reuse let a stranger end the family (issue
 * 42), while successors under the family's key make a guess worthless.
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
  return family.used.includes(presentedDigest) ? 'reused' : 'invalid';
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
    if (family.previous !== undefined) {
      family.used = [...family.used, family.previous.digest].slice(-REFRESH_USED_DIGESTS_KEPT);
    }
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
