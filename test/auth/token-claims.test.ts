/**
 * Issue 12: the time claims and header parameters of an access token, checked
 * against tokens signed with jose and the gateway's own key (from
 * makeKeysDir), so that the claim under test is the only thing wrong.
 */
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign as signBytes,
} from 'node:crypto';
import { exportJWK, SignJWT } from 'jose';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadKeySet } from '../../src/auth/tokens/keys.js';
import { issueAccessToken, type KeyRing } from '../../src/auth/tokens/tokens.js';
import { createTokenVerifier, type TokenVerifier } from '../../src/auth/tokens/verified-tokens.js';
import { makeKeysDir } from '../support/gateway.js';
import { TOKEN_SETTINGS } from '../support/token-settings.js';

const settings = TOKEN_SETTINGS;

let keys: { dir: string; kid: string; pem: string };
let keyring: KeyRing;
beforeAll(async () => {
  keys = await makeKeysDir();
  keyring = { current: await loadKeySet(keys.dir, { warn() {} }) };
});
afterEach(() => {
  vi.useRealTimers();
});

const now = () => Math.floor(Date.now() / 1000);

/** Claims as the gateway issues them, with `overrides` applied (`undefined` removes a claim). */
function claimsWith(overrides: Record<string, unknown>): Record<string, unknown> {
  const iat = now();
  const claims: Record<string, unknown> = {
    iss: settings.issuer,
    aud: settings.audience,
    sub: 'u1',
    tenant_id: 'acme',
    tenant_type: 'orgtenant',
    email: 'u1@example.com',
    sv: 0,
    mg: 1,
    jti: `j-${Math.random()}`,
    iat,
    exp: iat + settings.ttlSeconds,
    ...overrides,
  };
  for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
  return claims;
}

/** Signs with our key (unless another is given), under our kid and `typ: at+jwt` unless overridden. */
function sign(
  overrides: Record<string, unknown> = {},
  header: Record<string, unknown> = {},
  key = createPrivateKey(keys.pem),
): Promise<string> {
  return new SignJWT(claimsWith(overrides))
    .setProtectedHeader({ alg: 'EdDSA', kid: keys.kid, typ: 'at+jwt', ...header })
    .sign(key);
}

/** Signs by hand what jose refuses to produce (unknown `crit`, `b64: false`): EdDSA over `header.payload`. */
function signByHand(header: Record<string, unknown>, payload: string): string {
  const h = Buffer.from(
    JSON.stringify({ alg: 'EdDSA', kid: keys.kid, typ: 'at+jwt', ...header }),
  ).toString('base64url');
  const signature = signBytes(null, Buffer.from(`${h}.${payload}`), createPrivateKey(keys.pem));
  return `${h}.${payload}.${signature.toString('base64url')}`;
}

const encodedClaims = () => Buffer.from(JSON.stringify(claimsWith({}))).toString('base64url');

function verifier(): TokenVerifier {
  return createTokenVerifier(keyring, settings);
}

/** Verifies with a fresh verifier, expecting a refusal; @returns the description the client sees. */
async function refusal(token: string): Promise<string> {
  return (await refusalError(token)).message;
}

async function refusalError(token: string): Promise<Error> {
  const err = await verifier()
    .verify(token)
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(err).toMatchObject({ code: 'invalid_token', status: 401 });
  return err as Error;
}

describe('iat', () => {
  it('a token issued in the future beyond the clock skew is refused', async () => {
    expect(await refusal(await sign({ iat: now() + 120, exp: now() + 720 }))).toBe(
      "The token's iat claim is not acceptable.",
    );
  });

  it('a token issued in the future within the clock skew is accepted', async () => {
    const token = await sign({ iat: now() + 10, exp: now() + 610 });
    expect((await verifier().verify(token)).sub).toBe('u1');
  });

  it('a token without iat, or with an iat that is not a number, is refused', async () => {
    await refusal(await sign({ iat: undefined }));
    await refusal(await sign({ iat: String(now()) }));
  });

  it('a token issued longer than ttlSeconds ago is refused, whatever its exp says', async () => {
    expect(await refusal(await sign({ iat: now() - 700, exp: now() + 3600 }))).toBe(
      'The token has expired.',
    );
  });
});

describe('exp', () => {
  it('a token claiming a longer life than ttlSeconds is honoured for ttlSeconds only, cached or not', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const v = verifier();
    const iat = now();
    const token = await sign({ iat, exp: iat + 10 * 365 * 86_400 });
    expect(await v.verify(token)).toMatchObject({ sub: 'u1', exp: iat + settings.ttlSeconds });
    vi.setSystemTime((iat + settings.ttlSeconds + settings.clockSkewSeconds - 1) * 1000);
    expect((await v.verify(token)).sub).toBe('u1');
    vi.setSystemTime((iat + settings.ttlSeconds + settings.clockSkewSeconds + 1) * 1000);
    expect(v.peek(token)).toBeUndefined();
    await expect(v.verify(token)).rejects.toMatchObject({ code: 'invalid_token' });
  });

  it('a token the gateway issued keeps its exp', async () => {
    const { token, claims } = await issueAccessToken(keyring, settings, {
      userId: 'u1',
      email: 'u1@example.com',
      sessionVersion: 0,
      tenantId: 'acme',
      tenantType: 'orgtenant',
      membershipGeneration: 1,
    });
    expect((await verifier().verify(token)).exp).toBe(claims.exp);
  });

  it('a token without exp is refused', async () => {
    await refusal(await sign({ exp: undefined }));
  });
});

describe('nbf', () => {
  it('not yet valid beyond the clock skew is refused; within it, accepted', async () => {
    expect(await refusal(await sign({ nbf: now() + 120 }))).toBe(
      "The token's nbf claim is not acceptable.",
    );
    expect((await verifier().verify(await sign({ nbf: now() + 10 }))).sub).toBe('u1');
  });
});

describe('mg (the membership generation)', () => {
  it('a token without one, as versions before generations issued, is refused (fail closed)', async () => {
    expect(await refusal(await sign({ mg: undefined }))).toBe('The token lacks required claims.');
  });

  it('one that is not a positive integer is refused', async () => {
    for (const mg of [0, -1, 1.5, '1', null]) await refusal(await sign({ mg }));
    expect((await verifier().verify(await sign({ mg: 7 }))).mg).toBe(7);
  });
});

describe('header parameters', () => {
  it('a critical extension the gateway does not know is refused', async () => {
    await refusal(signByHand({ crit: ['exp-policy'], 'exp-policy': 'lenient' }, encodedClaims()));
    // The same token without the extension verifies: the refusal is the crit's.
    expect((await verifier().verify(signByHand({}, encodedClaims()))).sub).toBe('u1');
  });

  it('an unencoded payload (b64: false) is refused', async () => {
    // A payload without dots, so that it is refused for being unencoded, not for its shape.
    const raw = JSON.stringify(claimsWith({ email: 'u1@example', jti: 'j1' }));
    const err = await refusalError(signByHand({ crit: ['b64'], b64: false }, raw));
    expect((err.cause as Error).message).toMatch(/unencoded payload/);
  });

  it('a key embedded in the header (jwk), or pointed to (jku, x5u), is never used', async () => {
    const stranger = generateKeyPairSync('ed25519').privateKey;
    const jwk = await exportJWK(createPublicKey(stranger));
    for (const header of [
      { jwk },
      { jku: 'http://127.0.0.1:9/jwks.json' },
      { x5u: 'http://127.0.0.1:9/cert.pem' },
      { jwk, kid: undefined },
    ])
      expect(await refusal(await sign({}, header, stranger))).toMatch(
        /signature is not valid|not signed by a known key/,
      );
  });

  it('typ is at+jwt in either spelling RFC 9068 allows; anything else, or none, is refused', async () => {
    expect((await verifier().verify(await sign({}, { typ: 'application/at+jwt' }))).sub).toBe('u1');
    for (const typ of ['JWT', 'at+JWS', 'application/jwt', undefined])
      await refusal(await sign({}, { typ }));
  });
});
