import { generateKeyPairSync } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { generateKeyFile, loadKeySet } from '../../src/auth/tokens/keys.js';
import { issueAccessToken, type KeyRing } from '../../src/auth/tokens/tokens.js';
import { createTokenVerifier } from '../../src/auth/tokens/verified-tokens.js';
import { makeKeysDir } from '../support/gateway.js';
import { TOKEN_SETTINGS } from '../support/token-settings.js';

const settings = TOKEN_SETTINGS;
const subject = {
  userId: 'u1',
  email: 'u1@example.com',
  sessionVersion: 0,
  tenantId: 'acme',
  tenantType: 'orgtenant' as const,
  membershipGeneration: 1,
};

describe('verified-token cache', () => {
  it('verifies a token once, then answers from memory', async () => {
    const keyring: KeyRing = { current: await loadKeySet(undefined, { warn() {} }) };
    const verifier = createTokenVerifier(keyring, settings);
    const { token } = await issueAccessToken(keyring, settings, subject);
    for (let i = 0; i < 10; i++) expect((await verifier.verify(token)).sub).toBe('u1');
    expect(verifier.stats()).toEqual({ hits: 9, misses: 1, size: 1 });
  });

  it('takes a token whose tail is a cached token’s for nothing but itself: verified, refused', async () => {
    const keyring: KeyRing = { current: await loadKeySet(undefined, { warn() {} }) };
    const verifier = createTokenVerifier(keyring, settings);
    const { token } = await issueAccessToken(keyring, settings, subject);
    await verifier.verify(token);
    const [, payload = '', signature = ''] = token.split('.');
    // Another header, the same payload and signature: the same tail, not the same token.
    const forged = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${payload}.${signature}`;
    expect(verifier.peek(forged)).toBeUndefined();
    await expect(verifier.verify(forged)).rejects.toMatchObject({ code: 'invalid_token' });
    expect(verifier.peek(token)?.sub).toBe('u1');
    expect(verifier.stats()).toEqual({ hits: 1, misses: 2, size: 1 });
    // One byte off in the middle: the same length and tail, so the same cache key.
    const oneOff = `${token.slice(0, 20)}${token[20] === 'A' ? 'B' : 'A'}${token.slice(21)}`;
    expect(oneOff).toHaveLength(token.length);
    expect(verifier.peek(oneOff)).toBeUndefined();
    await expect(verifier.verify(oneOff)).rejects.toMatchObject({ code: 'invalid_token' });
    expect(verifier.peek(token)?.sub).toBe('u1');
    expect(verifier.stats()).toEqual({ hits: 2, misses: 3, size: 1 });
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

/** A keyring on a key directory, as the gateway builds it, counting its re-reads. */
async function keyringOn(
  dir: string,
): Promise<KeyRing & { reloads: number; reload(): Promise<void> }> {
  const keyring = {
    current: await loadKeySet(dir, { warn() {} }),
    reloads: 0,
    async reload() {
      keyring.reloads++;
      keyring.current = await loadKeySet(dir, { warn() {} });
    },
  };
  return keyring;
}

/** A well-formed token signed by a key that is not ours, under the given header. */
async function strangerToken(header: { kid?: string } = { kid: 'not-ours' }): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ tenant_id: 'acme', tenant_type: 'orgtenant', email: 'x@example.com', sv: 0 })
    .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', ...header })
    .setIssuer(settings.issuer)
    .setAudience(settings.audience)
    .setSubject('someone')
    .setJti(`j-${Math.random()}`)
    .setIssuedAt(now)
    .setExpirationTime(now + 600)
    .sign(generateKeyPairSync('ed25519').privateKey);
}

describe('unknown kid: re-reading the key directory (issue 12)', () => {
  it('a flood of unknown kids re-reads the directory once and leaves verified tokens cached', async () => {
    const keys = await makeKeysDir();
    const keyring = await keyringOn(keys.dir);
    const verifier = createTokenVerifier(keyring, settings);
    const { token } = await issueAccessToken(keyring, settings, subject);
    await verifier.verify(token);
    for (let i = 0; i < 20; i++)
      await expect(verifier.verify(await strangerToken())).rejects.toMatchObject({
        code: 'invalid_token',
      });
    expect(keyring.reloads).toBe(1);
    expect((await verifier.verify(token)).sub).toBe('u1');
    // One miss for the token, twenty for the strangers; the token answered from memory.
    expect(verifier.stats()).toEqual({ hits: 1, misses: 21, size: 1 });
  });

  it('a token with no kid, or a kid no key file could have, never re-reads the directory', async () => {
    const keys = await makeKeysDir();
    const keyring = await keyringOn(keys.dir);
    const verifier = createTokenVerifier(keyring, settings, { keyReloadIntervalMs: 0 });
    for (const header of [{}, { kid: '../etc/passwd' }, { kid: 'x'.repeat(500) }, { kid: '' }])
      await expect(verifier.verify(await strangerToken(header))).rejects.toMatchObject({
        code: 'invalid_token',
      });
    expect(keyring.reloads).toBe(0);
  });

  it('a key added to the directory verifies at once; the re-read keeps the cache', async () => {
    const keys = await makeKeysDir();
    const keyring = await keyringOn(keys.dir);
    const verifier = createTokenVerifier(keyring, settings);
    const older = (await issueAccessToken(keyring, settings, subject)).token;
    await verifier.verify(older);
    // Another replica reloaded first and signs with the new key.
    await generateKeyFile(keys.dir);
    const replica = await keyringOn(keys.dir);
    const newer = (await issueAccessToken(replica, settings, subject)).token;
    expect((await verifier.verify(newer)).sub).toBe('u1');
    expect(keyring.reloads).toBe(1);
    expect((await verifier.verify(older)).sub).toBe('u1');
    expect(verifier.stats()).toEqual({ hits: 1, misses: 2, size: 2 });
  });

  it('a token of a new key arriving while a re-read is under way waits for it, not refused', async () => {
    const keys = await makeKeysDir();
    const keyring = await keyringOn(keys.dir);
    const verifier = createTokenVerifier(keyring, settings);
    await generateKeyFile(keys.dir);
    const newer = (await issueAccessToken(await keyringOn(keys.dir), settings, subject)).token;
    const [stranger, genuine] = await Promise.allSettled([
      verifier.verify(await strangerToken()),
      verifier.verify(newer),
    ]);
    expect(stranger).toMatchObject({ status: 'rejected', reason: { code: 'invalid_token' } });
    expect(genuine).toMatchObject({ status: 'fulfilled', value: { sub: 'u1' } });
    expect(keyring.reloads).toBe(1);
  });

  it("a re-read that finds a key removed drops exactly that key's tokens", async () => {
    const keys = await makeKeysDir();
    const keyring = await keyringOn(keys.dir);
    const verifier = createTokenVerifier(keyring, settings, { keyReloadIntervalMs: 0 });
    const older = (await issueAccessToken(keyring, settings, subject)).token;
    await generateKeyFile(keys.dir);
    await keyring.reload();
    const newer = (await issueAccessToken(keyring, settings, subject)).token;
    await verifier.verify(older);
    await verifier.verify(newer);

    rmSync(join(keys.dir, `${keys.kid}.pem`));
    await expect(verifier.verify(await strangerToken())).rejects.toMatchObject({
      code: 'invalid_token',
    });
    // A removed key stops verifying, cached or not.
    expect(verifier.peek(older)).toBeUndefined();
    await expect(verifier.verify(older)).rejects.toMatchObject({ code: 'invalid_token' });
    expect(verifier.peek(newer)?.sub).toBe('u1');
    expect(verifier.stats().size).toBe(1);
  });
});
