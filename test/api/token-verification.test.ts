/**
 * The `invalid_token` and `invalid_credentials` rows of DESIGN §1's error
 * table: every way a bearer token or Basic header can be wrong, against a real
 * gateway on the in-memory store. Forged tokens are made with jose and the
 * gateway's own private key where the point is a wrong claim, not a wrong key.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { createRemoteJWKSet, exportJWK, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminUrlOf, basic, bearer, type TestGateway } from '../support/gateway.js';
import {
  expectBasicChallenge,
  expectBearerChallenge,
  expectError,
  expectNoCredentialsChallenge,
} from '../support/expect-error.js';
import {
  ALICE,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../support/identity-fixture.js';

let fx: IdentityFixture;
let url: string;
let genuine: { access_token: string; user_id: string };
let claims: JWTPayload;
beforeAll(async () => {
  fx = await startMemoryIdentityFixture();
  url = fx.gw.url;
  genuine = (await tokenFor(url, ALICE, 'acme')) as typeof genuine;
  claims = JSON.parse(
    Buffer.from(genuine.access_token.split('.')[1] as string, 'base64url').toString(),
  );
});
afterAll(() => fx.close());

const tenantWith = (authorization: string) =>
  fetch(`${url}/1/tenants/current`, { headers: { authorization } });

async function forge(
  overrides: Record<string, unknown>,
  header: Record<string, unknown> = {},
  key = createPrivateKey(fx.keys.pem),
): Promise<string> {
  return new SignJWT({ ...claims, ...overrides })
    .setProtectedHeader({ alg: 'EdDSA', kid: fx.keys.kid, typ: 'at+jwt', ...header })
    .sign(key);
}

describe('a token any standard verifier accepts from the public JWKS', () => {
  it('verifies with createRemoteJWKSet and carries sub, tenant_id and exp - iat == ttlSeconds', async () => {
    const jwks = createRemoteJWKSet(new URL(`${url}/.well-known/jwks.json`));
    const { payload, protectedHeader } = await jwtVerify(genuine.access_token, jwks, {
      issuer: 'tenant-gateway',
      audience: 'tenant-api',
      typ: 'at+jwt',
    });
    expect(protectedHeader).toMatchObject({ alg: 'EdDSA', kid: fx.keys.kid, typ: 'at+jwt' });
    expect(payload.sub).toBe(genuine.user_id);
    expect(payload.tenant_id).toBe('acme');
    expect(payload.exp! - payload.iat!).toBe(600);
    expect(typeof payload.jti).toBe('string');
  });

  it('a forged token with the right claims is accepted (the forging helper is sound)', async () => {
    expect((await tenantWith(bearer(await forge({ jti: 'forged-ok' })))).status).toBe(200);
  });
});

describe('invalid_token', () => {
  const now = () => Math.floor(Date.now() / 1000);
  it.each([
    ['no Authorization header', ''],
    ['an empty Authorization header', ' '],
    ['a Basic header where a bearer is due', basic(ALICE.email, ALICE.password)],
    ['another scheme', 'Token abc.def'],
  ])(
    'no bearer credentials (%s) → 401 invalid_token, the challenge without an error code',
    async (_case, authorization) => {
      const res = await fetch(
        `${url}/1/tenants/current`,
        authorization ? { headers: { authorization } } : {},
      );
      await expectError(res, 401, 'invalid_token');
      // RFC 6750 §3.1: a request without credentials gets no error code.
      expectNoCredentialsChallenge(res);
    },
  );

  const cases: [string, () => Promise<string>][] = [
    ['the Bearer scheme without a token', async () => 'Bearer'],
    ['a bearer that is not a JWT', async () => bearer('not-a-jwt')],
    [
      'a bearer with two tokens',
      async () => `Bearer ${genuine.access_token} ${genuine.access_token}`,
    ],
    [
      'a bad signature',
      async () => {
        const [h, p, s] = genuine.access_token.split('.') as [string, string, string];
        const flipped = (s[0] === 'A' ? 'B' : 'A') + s.slice(1);
        return bearer(`${h}.${p}.${flipped}`);
      },
    ],
    [
      'a changed payload',
      async () => {
        const [h, , s] = genuine.access_token.split('.') as [string, string, string];
        const p = Buffer.from(JSON.stringify({ ...claims, tenant_id: 'globex' })).toString(
          'base64url',
        );
        return bearer(`${h}.${p}.${s}`);
      },
    ],
    [
      'alg none',
      async () => {
        const h = Buffer.from(
          JSON.stringify({ alg: 'none', typ: 'at+jwt', kid: fx.keys.kid }),
        ).toString('base64url');
        const p = Buffer.from(JSON.stringify(claims)).toString('base64url');
        return bearer(`${h}.${p}.`);
      },
    ],
    [
      'HS256 signed with the public key as the secret',
      async () => {
        const publicPem = createPublicKey(fx.keys.pem).export({ type: 'spki', format: 'pem' });
        return bearer(
          await new SignJWT({ ...claims })
            .setProtectedHeader({ alg: 'HS256', kid: fx.keys.kid, typ: 'at+jwt' })
            .sign(Buffer.from(publicPem)),
        );
      },
    ],
    [
      'another key under our kid',
      async () => bearer(await forge({}, {}, generateKeyPairSync('ed25519').privateKey)),
    ],
    ['an unknown kid', async () => bearer(await forge({}, { kid: 'no-such-kid' }))],
    ['the wrong issuer', async () => bearer(await forge({ iss: 'someone-else' }))],
    ['the wrong audience', async () => bearer(await forge({ aud: 'another-api' }))],
    ['the wrong typ', async () => bearer(await forge({}, { typ: 'JWT' }))],
    [
      'expired beyond the clock skew',
      async () => bearer(await forge({ iat: now() - 700, exp: now() - 31 })),
    ],
    ['not yet valid beyond the clock skew', async () => bearer(await forge({ nbf: now() + 120 }))],
    [
      'issued in the future beyond the clock skew',
      async () => bearer(await forge({ iat: now() + 120, exp: now() + 720 })),
    ],
    ['no iat', async () => bearer(await forge({ iat: undefined }))],
    [
      'issued longer than ttlSeconds ago, whatever its exp says',
      async () => bearer(await forge({ iat: now() - 700, exp: now() + 3600 })),
    ],
    [
      'another key embedded in the header (jwk)',
      async () => {
        const stranger = generateKeyPairSync('ed25519');
        const jwk = await exportJWK(stranger.publicKey);
        return bearer(await forge({}, { jwk }, stranger.privateKey));
      },
    ],
    ['no tenant_id', async () => bearer(await forge({ tenant_id: undefined }))],
    [
      'an unknown user',
      async () => bearer(await forge({ sub: '00000000-0000-0000-0000-000000000000' })),
    ],
    ['a stale session version', async () => bearer(await forge({ sv: 7 }))],
    [
      'no membership generation (a token of an earlier version)',
      async () => bearer(await forge({ mg: undefined })),
    ],
    [
      'another membership generation',
      async () => bearer(await forge({ mg: (claims['mg'] as number) + 1000 })),
    ],
  ];

  it.each(cases)('%s → 401 invalid_token with a Bearer challenge', async (_case, make) => {
    const authorization = await make();
    const res = await fetch(
      `${url}/1/tenants/current`,
      authorization ? { headers: { authorization } } : {},
    );
    await expectError(res, 401, 'invalid_token');
    expectBearerChallenge(res);
  });

  it.each([
    ['a lower-case scheme', (token: string) => `bearer ${token}`],
    ['several spaces', (token: string) => `Bearer   ${token}`],
  ])('a token already verified is accepted in another valid spelling: %s', async (_case, spell) => {
    const exact = await fetch(`${url}/1/tenants/current`, {
      headers: { authorization: `Bearer ${genuine.access_token}` },
    });
    expect(exact.status).toBe(200);
    const res = await fetch(`${url}/1/tenants/current`, {
      headers: { authorization: spell(genuine.access_token) },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { tenant_id?: string }).tenant_id).toBe(claims.tenant_id);
  });

  it('a token expired within the clock skew is still accepted', async () => {
    expect((await tenantWith(bearer(await forge({ exp: now() - 5 })))).status).toBe(200);
  });
});

describe('unknown kids (issue 12)', () => {
  /** `tenant_gateway_cache_lookups_total` of the verified-token cache, from the admin listener's /metrics. */
  async function tokenCacheLookups(gw: TestGateway): Promise<{ hit: number; miss: number }> {
    const text = await (await fetch(`${adminUrlOf(gw)}/metrics`)).text();
    const read = (result: string) => {
      const line = text
        .split('\n')
        .find((l) =>
          l.startsWith(
            `tenant_gateway_cache_lookups_total{cache="verified_tokens",result="${result}"} `,
          ),
        );
      return Number(line?.split(' ')[1]);
    };
    return { hit: read('hit'), miss: read('miss') };
  }

  it('cannot empty the verified-token cache: a cached token still answers from memory', async () => {
    // A gateway of its own, so that no earlier test has used up its key re-read.
    const gw = await fx.startAnother();
    // Its store is its own: a token it issued.
    const token = (await tokenFor(gw.url, ALICE, 'acme')).access_token;
    const use = (authorization: string) =>
      fetch(`${gw.url}/1/tenants/current`, { headers: { authorization } });
    expect((await use(bearer(token))).status).toBe(200);
    const before = await tokenCacheLookups(gw);

    for (let i = 0; i < 5; i++) {
      const stranger = await forge(
        { jti: `stranger-${i}` },
        { kid: `no-such-kid-${i}` },
        generateKeyPairSync('ed25519').privateKey,
      );
      await expectError(await use(bearer(stranger)), 401, 'invalid_token');
    }
    const res = await use(bearer(token));
    expect(res.status).toBe(200);
    expect(((await res.json()) as { tenant_id?: string }).tenant_id).toBe('acme');
    // Five misses for the strangers; the genuine token was a hit, not verified again.
    expect(await tokenCacheLookups(gw)).toEqual({
      hit: before.hit + 1,
      miss: before.miss + 5,
    });
  });
});

describe('invalid_credentials', () => {
  const raw = (s: string) => `Basic ${Buffer.from(s, 'utf8').toString('base64')}`;
  const cases: [string, string | undefined][] = [
    ['no Authorization header', undefined],
    ['a bearer where Basic is due', bearer(genuine?.access_token ?? 'x.y.z')],
    ['bad base64', 'Basic !!!notbase64'],
    ['no colon', raw('alice@example.com')],
    ['an empty user', raw(':alice-password-1')],
    ['a wrong password', basic(ALICE.email, 'alice-password-2')],
    ['an unknown e-mail', basic('nobody@example.com', ALICE.password)],
    ['a password over 72 bytes', basic(ALICE.email, `${ALICE.password}${'x'.repeat(80)}`)],
  ];
  it.each(cases)(
    '%s → 401 invalid_credentials with a Basic challenge',
    async (_case, authorization) => {
      const res = await fetch(
        `${url}/1/token?tenant_id=acme`,
        authorization ? { headers: { authorization } } : {},
      );
      await expectError(res, 401, 'invalid_credentials');
      expectBasicChallenge(res);
    },
  );

  it('unknown e-mail and wrong password get the identical answer', async () => {
    const a = await fetch(`${url}/1/token?tenant_id=acme`, {
      headers: { authorization: basic('nobody@example.com', 'x-password-1') },
    });
    const b = await fetch(`${url}/1/token?tenant_id=acme`, {
      headers: { authorization: basic(ALICE.email, 'x-password-1') },
    });
    expect(await a.json()).toEqual(await b.json());
  });
});
