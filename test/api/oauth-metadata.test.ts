/**
 * Issue 42, finding 8: the RFC 8414 metadata on running gateways. Its
 * `grant_types_supported` is exactly what `POST /1/oauth/token` serves — each
 * listed grant type, sent to the token endpoint, is answered by its grant
 * (never `unsupported_grant_type`), and every grant type it does not list is
 * `unsupported_grant_type` — with sign-in off and on; PKCE is S256. Its URLs
 * never carry a Host that is not a valid host[:port] (`a.example/x?y=` is a
 * 400, never a document), and with `publicUrl` they are `publicUrl`'s
 * whatever the Host, and only then publicly cacheable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getWithHost } from '../support/host-request.js';
import { startMemoryIdentityFixture, type IdentityFixture } from '../support/identity-fixture.js';
import { EXCHANGE } from '../support/token-exchange.js';

const METADATA = '/.well-known/oauth-authorization-server';
/** Every grant type a client might try: RFC 6749's, RFC 8693's, device, JWT bearer, SAML, CIBA. */
const KNOWN_GRANTS = [
  'client_credentials',
  'refresh_token',
  'authorization_code',
  EXCHANGE,
  'password',
  'implicit',
  'urn:ietf:params:oauth:grant-type:device_code',
  'urn:ietf:params:oauth:grant-type:jwt-bearer',
  'urn:ietf:params:oauth:grant-type:saml2-bearer',
  'urn:openid:params:grant-type:ciba',
];

async function metadata(url: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}${METADATA}`);
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

/** The token endpoint's error code for `grant_type` alone (every grant's other parameters missing). */
async function tokenError(url: string, grantType: string): Promise<string> {
  const res = await fetch(`${url}/1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: grantType }),
  });
  expect(res.status).toBeGreaterThanOrEqual(400);
  return ((await res.json()) as { error: string }).error;
}

async function expectListedIsServed(url: string): Promise<string[]> {
  const listed = (await metadata(url)).grant_types_supported as string[];
  for (const grant of listed)
    expect([grant, await tokenError(url, grant)]).not.toEqual([grant, 'unsupported_grant_type']);
  for (const grant of KNOWN_GRANTS.filter((g) => !listed.includes(g)))
    expect([grant, await tokenError(url, grant)]).toEqual([grant, 'unsupported_grant_type']);
  return listed;
}

describe('grant_types_supported is what the token endpoint serves', () => {
  let plain: IdentityFixture;
  let signIn: IdentityFixture;
  beforeAll(async () => {
    [plain, signIn] = await Promise.all([
      startMemoryIdentityFixture(),
      startMemoryIdentityFixture({
        sso: { enabled: true, redirectUris: ['https://app.example.test/signed-in'] },
        tokens: { refresh: { enabled: true } },
      }),
    ]);
  });
  afterAll(async () => {
    await plain?.close();
    await signIn?.close();
  });

  it('without sign-in or refresh tokens: client_credentials alone', async () => {
    expect(await expectListedIsServed(plain.gw.url)).toEqual(['client_credentials']);
  });

  it('with sign-in and refresh tokens: the code, the exchange and refresh too; PKCE S256', async () => {
    const listed = await expectListedIsServed(signIn.gw.url);
    expect([...listed].sort()).toEqual(
      ['authorization_code', 'client_credentials', EXCHANGE, 'refresh_token'].sort(),
    );
    const doc = await metadata(signIn.gw.url);
    expect(doc.code_challenge_methods_supported).toEqual(['S256']);
    expect(doc.token_endpoint_auth_methods_supported).toContain('none');
  });
});

describe('the metadata and the Host', () => {
  let byHost: IdentityFixture;
  let fixed: IdentityFixture;
  beforeAll(async () => {
    [byHost, fixed] = await Promise.all([
      startMemoryIdentityFixture(),
      startMemoryIdentityFixture({ publicUrl: 'https://gw.example.com' }),
    ]);
  });
  afterAll(async () => {
    await byHost?.close();
    await fixed?.close();
  });

  const hostile = [
    'a.example/x?y=',
    'a.example#frag',
    'user@a.example',
    'a.example:80@evil.example',
    'a.example%2fevil',
    'a.example,evil.example',
    "a.example'onload=",
    'a.example:99999',
    'a.example:8o',
    '[::1',
    '[not-ipv6]',
    '-a.example',
    'a..example',
  ];

  it('refuses a Host that is not a valid host[:port] with 400 invalid_request, never echoed', async () => {
    for (const host of hostile) {
      const res = await getWithHost(byHost.gw.url, METADATA, host);
      expect([host, res.status]).toEqual([host, 400]);
      expect(JSON.parse(res.body)).toMatchObject({ error: 'invalid_request' });
      expect(res.body).not.toContain(host);
    }
  });

  it('builds its URLs from a valid Host (lower-cased), and is then private', async () => {
    for (const [host, origin] of [
      ['GW.Example.Test:8443', 'http://gw.example.test:8443'],
      ['10.1.2.3', 'http://10.1.2.3'],
      ['[::1]:8080', 'http://[::1]:8080'],
      ['gw.example.test.', 'http://gw.example.test.'],
    ] as const) {
      const res = await getWithHost(byHost.gw.url, METADATA, host);
      expect(res.status).toBe(200);
      const doc = JSON.parse(res.body) as Record<string, string>;
      expect(doc.token_endpoint).toBe(`${origin}/1/oauth/token`);
      expect(doc.jwks_uri).toBe(`${origin}/.well-known/jwks.json`);
      expect(doc.revocation_endpoint).toBe(`${origin}/1/oauth/revoke`);
      expect(res.headers['cache-control']).toBe('private, max-age=300');
    }
  });

  it('with publicUrl: its URLs whatever the Host, publicly cacheable', async () => {
    for (const host of ['a.example/x?y=', 'evil.example']) {
      const res = await getWithHost(fixed.gw.url, METADATA, host);
      expect(res.status).toBe(200);
      const doc = JSON.parse(res.body) as Record<string, string>;
      expect(doc.token_endpoint).toBe('https://gw.example.com/1/oauth/token');
      expect(doc.jwks_uri).toBe('https://gw.example.com/.well-known/jwks.json');
      expect(doc.revocation_endpoint).toBe('https://gw.example.com/1/oauth/revoke');
      expect(res.body).not.toContain('evil');
      expect(res.headers['cache-control']).toBe('public, max-age=300');
    }
  });
});
