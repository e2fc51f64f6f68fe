import { describe, expect, it } from 'vitest';
import { loadKeySet } from '../../src/auth/keys.js';
import { issueAccessToken, type KeyRing, type TokenSettings } from '../../src/auth/tokens.js';
import { createTokenVerifier } from '../../src/auth/verified-tokens.js';

const settings: TokenSettings = {
  issuer: 'tenant-gateway',
  audience: 'tenant-api',
  ttlSeconds: 600,
  algorithms: ['EdDSA', 'ES256'],
  clockSkewSeconds: 30,
};
const subject = {
  userId: 'u1',
  email: 'u1@example.com',
  sessionVersion: 0,
  tenantId: 'acme',
  tenantType: 'orgtenant' as const,
};

describe('verified-token cache', () => {
  it('verifies a token once, then answers from memory', async () => {
    const keyring: KeyRing = { current: await loadKeySet(undefined, { warn() {} }) };
    const verifier = createTokenVerifier(keyring, settings);
    const { token } = await issueAccessToken(keyring, settings, subject);
    for (let i = 0; i < 10; i++) expect((await verifier.verify(token)).sub).toBe('u1');
    expect(verifier.stats()).toEqual({ hits: 9, misses: 1, size: 1 });
  });

  it('is bounded: a flood of distinct valid tokens keeps at most cacheEntries', async () => {
    const keyring: KeyRing = { current: await loadKeySet(undefined, { warn() {} }) };
    const verifier = createTokenVerifier(keyring, settings, { cacheEntries: 10 });
    for (let i = 0; i < 50; i++)
      await verifier.verify((await issueAccessToken(keyring, settings, subject)).token);
    expect(verifier.stats().size).toBe(10);
  });

  it('never caches a token that failed, and never extends an expired one', async () => {
    const keyring: KeyRing = { current: await loadKeySet(undefined, { warn() {} }) };
    const verifier = createTokenVerifier(keyring, settings);
    await expect(verifier.verify('a.b.c')).rejects.toMatchObject({ code: 'invalid_token' });
    expect(verifier.stats().size).toBe(0);
    const past = Math.floor(Date.now() / 1000) - 1000;
    const { token } = await issueAccessToken(keyring, settings, subject, past);
    await expect(verifier.verify(token)).rejects.toMatchObject({ code: 'invalid_token' });
    expect(verifier.stats().size).toBe(0);
  });

  it('after clear(), a token of a removed key is refused', async () => {
    const keyring: KeyRing = { current: await loadKeySet(undefined, { warn() {} }) };
    const verifier = createTokenVerifier(keyring, settings);
    const { token } = await issueAccessToken(keyring, settings, subject);
    await verifier.verify(token);
    keyring.current = await loadKeySet(undefined, { warn() {} });
    expect((await verifier.verify(token)).sub).toBe('u1'); // still cached: the key change is not known yet
    verifier.clear();
    await expect(verifier.verify(token)).rejects.toMatchObject({ code: 'invalid_token' });
  });
});
