/**
 * A session cookie's value (issue 44): random ids and secrets of the one
 * shape, parsed strictly, the secret checked by digest — and a second
 * spelling of the same bytes (base64url's last character carries unused
 * bits) is another secret, never the same one.
 */
import { describe, expect, it } from 'vitest';
import {
  newSessionCookie,
  parseSessionCookie,
  secretDigest,
  secretMatches,
} from '../../src/auth/sessions/session-cookie-value.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

describe('session cookie values', () => {
  it('are of one shape, all different, and parse back into their parts', () => {
    const made = Array.from({ length: 200 }, () => newSessionCookie());
    expect(new Set(made.map((m) => m.cookieValue)).size).toBe(200);
    for (const { cookieValue, sessionId, digest } of made) {
      expect(cookieValue).toMatch(/^ses_[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
      const parts = parseSessionCookie(cookieValue);
      expect(parts?.sessionId).toBe(sessionId);
      expect(secretDigest(parts?.secret ?? '')).toBe(digest);
      expect(secretMatches(parts?.secret ?? '', digest)).toBe(true);
    }
  });

  it('take a second spelling of the same secret bytes for another secret', () => {
    const { cookieValue, digest } = newSessionCookie();
    const secret = cookieValue.slice(cookieValue.indexOf('.') + 1);
    const last = ALPHABET.indexOf(secret.at(-1) as string);
    // 43 characters carry 258 bits: the last one's two low bits are unused.
    const sibling = `${secret.slice(0, -1)}${ALPHABET[last ^ 1]}`;
    expect(Buffer.from(sibling, 'base64url')).toEqual(Buffer.from(secret, 'base64url'));
    expect(secretMatches(sibling, digest)).toBe(false);
  });

  it('refuse a digest of another length or not hex without throwing', () => {
    const { cookieValue } = newSessionCookie();
    const secret = cookieValue.slice(cookieValue.indexOf('.') + 1);
    expect(secretMatches(secret, '')).toBe(false);
    expect(secretMatches(secret, 'zz'.repeat(32))).toBe(false);
    expect(secretMatches(secret, secretDigest(secret).slice(2))).toBe(false);
  });
});
