/** Machine clients' ids, secrets and API keys (`src/auth/clients/secrets.ts`): formats, checksums, digests. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  apiKeyId,
  isClientId,
  isKeyId,
  newApiKey,
  newClientId,
  newClientSecret,
  secretDigest,
  secretMatches,
} from '../../src/auth/clients/secrets.js';

describe('machine client secrets', () => {
  it('makes ids and secrets of the documented formats, never twice the same', () => {
    const ids = new Set(Array.from({ length: 200 }, newClientId));
    expect(ids.size).toBe(200);
    for (const id of ids) expect(isClientId(id), id).toBe(true);
    const secret = newClientSecret();
    expect(secret).toMatch(/^tgs_[A-Za-z0-9_-]{43}$/);
    expect(newClientSecret()).not.toBe(secret);
  });

  it('an API key names its key id and passes its checksum', () => {
    for (let i = 0; i < 200; i++) {
      const { keyId, apiKey } = newApiKey();
      expect(isKeyId(keyId), keyId).toBe(true);
      expect(apiKey).toMatch(/^tgk_[a-z2-7]{16}_[A-Za-z0-9_-]{43}_[0-9A-Za-z]{6}$/);
      expect(apiKeyId(apiKey)).toBe(keyId);
    }
  });

  it('refuses a key with any one character changed, dropped or added, before any lookup', () => {
    const { apiKey } = newApiKey();
    for (let i = 0; i < apiKey.length; i++) {
      const c = apiKey[i] as string;
      const other = c === 'a' ? 'b' : 'a';
      expect(apiKeyId(apiKey.slice(0, i) + other + apiKey.slice(i + 1)), `at ${i}`).toBeNull();
      expect(apiKeyId(apiKey.slice(0, i) + apiKey.slice(i + 1)), `without ${i}`).toBeNull();
    }
    expect(apiKeyId(`${apiKey}x`)).toBeNull();
    expect(apiKeyId('')).toBeNull();
    expect(apiKeyId(newClientSecret())).toBeNull();
  });

  it('keeps a SHA-256 digest and matches only the secret it was made of', () => {
    const secret = newClientSecret();
    const digest = secretDigest(secret);
    expect(digest).toBe(createHash('sha256').update(secret).digest('hex'));
    expect(digest).not.toContain(secret.slice(4));
    expect(secretMatches(secret, digest)).toBe(true);
    expect(secretMatches(`${secret}x`, digest)).toBe(false);
    expect(secretMatches(newClientSecret(), digest)).toBe(false);
    expect(secretMatches(secret, 'not-hex')).toBe(false);
    expect(secretMatches(secret, '')).toBe(false);
  });
});
