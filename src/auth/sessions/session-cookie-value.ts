/**
 * A session cookie's value, `<session id>.<secret>`: `ses_` and 16 random
 * bytes (22 base64url characters) name the record, 32 random bytes (43
 * base64url characters) prove the holder. The store keeps only the secret's
 * SHA-256, so a copy of the store (or a backup) holds no usable cookie.
 * Anything not of exactly this shape is refused before any lookup.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const ID_PREFIX = 'ses_';
/** The whole value, exactly: no padding, no other alphabet, no whitespace, nothing around it. */
const SHAPE = /^ses_[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/;
/** Where the secret starts: after the id and the dot. */
const SECRET_AT = ID_PREFIX.length + 22 + 1;

/** A value's two parts. */
export interface SessionCookieParts {
  sessionId: string;
  secret: string;
}

/** A new session's cookie value, its id, and the digest the store keeps of its secret. */
export interface NewSessionCookie {
  cookieValue: string;
  sessionId: string;
  digest: string;
}

/** A fresh id and secret from the system's CSPRNG. */
export function newSessionCookie(): NewSessionCookie {
  const sessionId = `${ID_PREFIX}${randomBytes(16).toString('base64url')}`;
  const secret = randomBytes(32).toString('base64url');
  return { cookieValue: `${sessionId}.${secret}`, sessionId, digest: secretDigest(secret) };
}

/** The parts of a value of exactly the cookie's shape; undefined for anything else. */
export function parseSessionCookie(value: string): SessionCookieParts | undefined {
  if (!SHAPE.test(value)) return undefined;
  return { sessionId: value.slice(0, SECRET_AT - 1), secret: value.slice(SECRET_AT) };
}

/**
 * SHA-256 of the secret as sent (its characters, not the bytes they decode
 * to), hex: a second spelling of the same bytes (base64url's last character
 * carries unused bits) is another secret, never the same one.
 */
export function secretDigest(secret: string): string {
  return createHash('sha256').update(secret, 'latin1').digest('hex');
}

/** Whether `secret` is the one `digest` was made of, compared in constant time. */
export function secretMatches(secret: string, digest: string): boolean {
  const expected = Buffer.from(digest, 'hex');
  const actual = createHash('sha256').update(secret, 'latin1').digest();
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
