/**
 * The one-time tokens mailed in links (e-mail verification, password reset,
 * invitations): 256 random bits, base64url, shown only in the mail; the store
 * keeps their SHA-256 digest, so a copy of the store names no live link.
 */
import { createHash, randomBytes } from 'node:crypto';

export interface OneTimeToken {
  /** Goes into the mailed link, nowhere else (never a log, never the store). */
  token: string;
  /** What the store keeps and looks the token up by. */
  digest: string;
}

export function newOneTimeToken(): OneTimeToken {
  const token = randomBytes(32).toString('base64url');
  return { token, digest: oneTimeTokenDigest(token) };
}

/** The digest a presented token is looked up by (hex SHA-256). */
export function oneTimeTokenDigest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A value shaped like a token (43 base64url characters): anything else is refused before a store call. */
export function isOneTimeTokenShape(value: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(value);
}
