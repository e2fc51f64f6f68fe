/**
 * Issue 32, machine clients end to end on a real gateway (in-memory store)
 * and a real upstream: `openid-client` discovers the RFC 8414 metadata and
 * runs the client-credentials grant; the token reaches a proxied route as the
 * client (`X-Client-Id`, its tenant, no `X-User-*`); every refusal of
 * `POST /1/oauth/token`; the hostile cases (another tenant named, a secret
 * one byte off); logout and removal end the token.
 */
import type { IncomingHttpHeaders } from 'node:http';
import * as oidc from 'openid-client';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { basic, bearer } from '../support/gateway.js';
import { expectError } from '../support/expect-error.js';
import { fixtureSuite } from '../support/fixture-suite.js';
import { startEchoUpstream } from '../support/upstream.js';
import {
  clientCredentials,
  clientToken,
  makeClient,
  type MachineClient,
} from '../support/machine-client.js';

let acmeClient: MachineClient;

const s = fixtureSuite({ upstream: startEchoUpstream }, ({ upstream }) => ({
  routes: [
    {
      prefix: '/orders',
      upstream: upstream.url,
      tenant: { header: 'X-Tenant-Id', path: '/orders/tenants/:tenant_id', query: 'tenant_id' },
    },
  ],
  authorization: {
    roles: { admin: ['orders:write', 'orders:read'], member: ['orders:read'] },
    clientScopes: ['orders:read', 'orders:write', 'exports:run'],
  },
}));
beforeAll(async () => {
  acmeClient = await makeClient(s.gw.gateway.store, 'acme', ['orders:read', 'orders:write']);
});

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const post = (body: string, headers: Record<string, string> = FORM) =>
  fetch(`${s.gw.url}/1/oauth/token`, { method: 'POST', headers, body });
const orders = (token: string, path = '/orders/list', headers: Record<string, string> = {}) =>
  fetch(`${s.gw.url}${path}`, { headers: { authorization: bearer(token), ...headers } });

describe('openid-client against a running gateway', () => {
  for (const [method, auth] of [
    ['client_secret_basic', oidc.ClientSecretBasic],
    ['client_secret_post', oidc.ClientSecretPost],
  ] as const) {
    it(`discovers the metadata and gets a token by ${method}, which calls a proxied route`, async () => {
      const config = await oidc.discovery(
        new URL(`${s.gw.url}/.well-known/oauth-authorization-server`),
        acmeClient.clientId,
        undefined,
        auth(acmeClient.clientSecret),
        { execute: [oidc.allowInsecureRequests] },
      );
      expect(config.serverMetadata().token_endpoint).toBe(`${s.gw.url}/1/oauth/token`);
      const tokens = await oidc.clientCredentialsGrant(config, { scope: 'orders:read' });
      expect(tokens.token_type).toBe('bearer');
      expect(tokens.scope).toBe('orders:read');
      expect(tokens.expires_in).toBe(600);
      expect((tokens as unknown as { tenant_id: string }).tenant_id).toBe('acme');

      s.up.upstream.requests.length = 0;
      const res = await orders(tokens.access_token, '/orders/list', { 'X-Tenant-Id': 'acme' });
      expect(res.status).toBe(200);
      const headers = s.up.upstream.requests[0]?.headers as IncomingHttpHeaders;
      expect(headers['x-client-id']).toBe(acmeClient.clientId);
      expect(headers['x-tenant-id']).toBe('acme');
      expect(headers['x-tenant-type']).toBe('orgtenant');
      expect(headers['x-user-id']).toBeUndefined();
      expect(headers['x-user-email']).toBeUndefined();
    });
  }
});

describe('POST /1/oauth/token', () => {
  it('answers an RFC 6749 token response, never cached, with an RFC 9068 client token', async () => {
    const res = await clientCredentials(s.gw.url, acmeClient);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('pragma')).toBe('no-cache');
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(
      ['access_token', 'expires_in', 'scope', 'tenant_id', 'token_type'].sort(),
    );
    expect(body).toMatchObject({
      token_type: 'Bearer',
      expires_in: 600,
      scope: 'orders:read orders:write',
      tenant_id: 'acme',
    });
    const token = body.access_token as string;
    expect(decodeProtectedHeader(token).typ).toBe('at+jwt');
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({
      sub: acmeClient.clientId,
      client_id: acmeClient.clientId,
      tenant_id: 'acme',
      tenant_type: 'orgtenant',
      scope: 'orders:read orders:write',
    });
    expect(Number.isSafeInteger(claims.cg)).toBe(true);
    expect(claims.email).toBeUndefined();
    expect(typeof claims.jti).toBe('string');
  });

  it('narrows to the scopes asked for, sorted and without duplicates', async () => {
    const res = await clientCredentials(s.gw.url, acmeClient, {
      scope: 'orders:write orders:read orders:write',
    });
    expect(((await res.json()) as { scope: string }).scope).toBe('orders:read orders:write');
  });

  it('refuses a scope the client does not hold: 400 invalid_scope', async () => {
    await expectError(
      await clientCredentials(s.gw.url, acmeClient, { scope: 'orders:read admin' }),
      400,
      'invalid_scope',
    );
  });

  it('takes Basic with the id and secret form-urlencoded (RFC 6749 §2.3.1)', async () => {
    const encoded = basic(
      encodeURIComponent(acmeClient.clientId),
      encodeURIComponent(acmeClient.clientSecret),
    );
    const res = await post(form({ grant_type: 'client_credentials' }), {
      ...FORM,
      authorization: encoded,
    });
    expect(res.status).toBe(200);
  });

  it('refuses a body that is not form-encoded: 400 invalid_request', async () => {
    const json = JSON.stringify({
      grant_type: 'client_credentials',
      client_id: acmeClient.clientId,
      client_secret: acmeClient.clientSecret,
    });
    await expectError(
      await post(json, { 'content-type': 'application/json' }),
      400,
      'invalid_request',
    );
    await expectError(await post(json, {}), 400, 'invalid_request');
  });

  it('refuses two authentication methods at once: 400 invalid_request', async () => {
    const res = await post(
      form({
        grant_type: 'client_credentials',
        client_id: acmeClient.clientId,
        client_secret: acmeClient.clientSecret,
      }),
      { ...FORM, authorization: basic(acmeClient.clientId, acmeClient.clientSecret) },
    );
    await expectError(res, 400, 'invalid_request');
  });

  it('refuses a repeated or missing parameter: 400 invalid_request', async () => {
    await expectError(
      await post(
        `grant_type=client_credentials&scope=orders:read&scope=orders:write&client_id=${acmeClient.clientId}&client_secret=${acmeClient.clientSecret}`,
      ),
      400,
      'invalid_request',
    );
    await expectError(
      await post(form({ client_id: acmeClient.clientId, client_secret: acmeClient.clientSecret })),
      400,
      'invalid_request',
    );
  });

  it('refuses another grant type: 400 unsupported_grant_type', async () => {
    for (const grantType of [
      'password',
      'authorization_code',
      'refresh_token',
      'CLIENT_CREDENTIALS',
    ]) {
      await expectError(
        await clientCredentials(s.gw.url, acmeClient, { grant_type: grantType }),
        400,
        'unsupported_grant_type',
      );
    }
  });

  it('refuses an unknown client, a wrong secret and no credentials alike: 401 invalid_client + Basic challenge', async () => {
    const secret = acmeClient.clientSecret;
    // One byte off: the last character changed.
    const offByOne = secret.slice(0, -1) + (secret.endsWith('A') ? 'B' : 'A');
    const cases = [
      clientCredentials(s.gw.url, { ...acmeClient, clientSecret: offByOne }),
      clientCredentials(s.gw.url, { ...acmeClient, clientSecret: secret.slice(0, -1) }),
      clientCredentials(s.gw.url, { ...acmeClient, clientSecret: '' }),
      clientCredentials(s.gw.url, {
        clientId: 'tgc_aaaaaaaaaaaaaaaaaaaaaaaaaa',
        clientSecret: secret,
      }),
      clientCredentials(s.gw.url, { clientId: 'not-a-client', clientSecret: secret }),
      post(form({ grant_type: 'client_credentials' })),
      post(form({ grant_type: 'client_credentials' }), {
        ...FORM,
        authorization: basic(acmeClient.clientId, offByOne),
      }),
      post(form({ grant_type: 'client_credentials' }), { ...FORM, authorization: 'Basic %%%' }),
    ];
    for (const res of await Promise.all(cases)) {
      expect(res.headers.get('www-authenticate')).toBe('Basic realm="tenant-gateway"');
      const body = await expectError(res, 401, 'invalid_client');
      expect(JSON.stringify(body)).not.toContain(secret);
    }
  });

  it('refuses an expired client: 401 invalid_client', async () => {
    const expired = await makeClient(s.gw.gateway.store, 'acme', ['orders:read'], {
      expiresAt: Math.floor(Date.now() / 1000) - 1,
    });
    await expectError(await clientCredentials(s.gw.url, expired), 401, 'invalid_client');
  });

  it('keeps the GET alias for Basic user logins', async () => {
    const res = await fetch(`${s.gw.url}/1/oauth/token?tenant_id=acme`, {
      headers: { authorization: basic('alice@example.com', 'alice-password-1') },
    });
    expect(res.status).toBe(200);
  });
});

describe('what the gateway records', () => {
  it('audits a token issued and a failed authentication, never the secret; counts tokens by kind', async () => {
    const client = await makeClient(s.gw.gateway.store, 'acme', ['orders:read']);
    const wrong = `${client.clientSecret.slice(0, -1)}x`;
    expect((await clientCredentials(s.gw.url, { ...client, clientSecret: wrong })).status).toBe(
      401,
    );
    const { jti } = decodeJwt(await clientToken(s.gw.url, client));
    const log = s.gw.gateway.store.auditLog({ maxEventsPerStream: 10_000 });
    const events = async (stream: string) =>
      (await log.read(stream, 0))
        .map((entry) => JSON.parse(entry.event) as Record<string, unknown>)
        .filter((event) => event.client_id === client.clientId);
    const [failed] = await events('users');
    expect(failed).toMatchObject({ event: 'client_auth_failed', actor: client.clientId });
    const [issued] = await events('tenant:acme');
    expect(issued).toMatchObject({
      event: 'client_token_issued',
      tenant_id: 'acme',
      scopes: ['orders:read'],
      jti,
    });
    for (const event of [failed, issued]) {
      expect(JSON.stringify(event)).not.toContain(client.clientSecret);
      expect(JSON.stringify(event)).not.toContain(wrong);
    }
    const metrics = await (await fetch(`${s.gw.adminUrl}/metrics`)).text();
    expect(metrics).toMatch(/^tenant_gateway_tokens_issued_total\{kind="client"\} [1-9]/m);
    expect(metrics).toMatch(/^tenant_gateway_tokens_issued_total\{kind="user"\} [1-9]/m);
  });
});

describe('GET /.well-known/oauth-authorization-server', () => {
  it('describes the token endpoint (RFC 8414)', async () => {
    const res = await fetch(`${s.gw.url}/.well-known/oauth-authorization-server`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      issuer: 'tenant-gateway',
      token_endpoint: `${s.gw.url}/1/oauth/token`,
      jwks_uri: `${s.gw.url}/.well-known/jwks.json`,
      grant_types_supported: ['client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      revocation_endpoint: `${s.gw.url}/1/oauth/revoke`,
      revocation_endpoint_auth_methods_supported: ['none'],
      response_types_supported: [],
      code_challenge_methods_supported: ['S256'],
      // Every role's scopes and every scope a client may hold, once each.
      scopes_supported: ['exports:run', 'orders:read', 'orders:write'],
    });
  });

  it('believes X-Forwarded-Host/Proto only from a trusted proxy', async () => {
    const res = await fetch(`${s.gw.url}/.well-known/oauth-authorization-server`, {
      headers: { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' },
    });
    expect(((await res.json()) as { token_endpoint: string }).token_endpoint).toBe(
      `${s.gw.url}/1/oauth/token`,
    );
  });
});

describe('a client token on the proxy', () => {
  it('is refused with another tenant named, in every spelling: 403 tenant_mismatch', async () => {
    const token = await clientToken(s.gw.url, acmeClient);
    const cases = [
      orders(token, '/orders/list', { 'X-Tenant-Id': 'globex' }),
      orders(token, '/orders/list', { x_tenant_id: 'globex' }),
      orders(token, '/orders/tenants/globex/items'),
      orders(token, '/orders/list?tenant_id=globex'),
      orders(token, '/orders/list?tenant_id=acme&tenant_id=globex'),
    ];
    for (const res of await Promise.all(cases)) await expectError(res, 403, 'tenant_mismatch');
    expect((await orders(token, '/orders/tenants/acme/items')).status).toBe(200);
  });

  it('strips a forged X-Client-Id from a user request', async () => {
    const res = await fetch(`${s.gw.url}/1/token?tenant_id=acme`, {
      headers: { authorization: basic('alice@example.com', 'alice-password-1') },
    });
    const { access_token: token } = (await res.json()) as { access_token: string };
    s.up.upstream.requests.length = 0;
    await orders(token, '/orders/list', { 'X-Client-Id': acmeClient.clientId });
    expect(s.up.upstream.requests[0]?.headers['x-client-id']).toBeUndefined();
    expect(s.up.upstream.requests[0]?.headers['x-user-email']).toBe('alice@example.com');
  });

  it('ends on logout (DELETE /1/token): 401 after the 204', async () => {
    const token = await clientToken(s.gw.url, acmeClient);
    expect((await orders(token)).status).toBe(200);
    const out = await fetch(`${s.gw.url}/1/token`, {
      method: 'DELETE',
      headers: { authorization: bearer(token) },
    });
    expect(out.status).toBe(204);
    await expectError(await orders(token), 401, 'invalid_token');
  });

  it('ends when the client is rotated or removed, and a new secret works after a rotation', async () => {
    const store = s.gw.gateway.store;
    const client = await makeClient(store, 'acme', ['orders:read']);
    const before = await clientToken(s.gw.url, client);
    expect((await orders(before)).status).toBe(200);
    const { secretDigest, newClientSecret } = await import('../../src/auth/clients/secrets.js');
    const secret = newClientSecret();
    await store.clients.rotateClientSecret(client.clientId, secretDigest(secret), 0);
    await expectError(await orders(before), 401, 'invalid_token');
    await expectError(await clientCredentials(s.gw.url, client), 401, 'invalid_client');
    const after = await clientToken(s.gw.url, { ...client, clientSecret: secret });
    expect((await orders(after)).status).toBe(200);
    await store.clients.removeClient(client.clientId);
    await expectError(await orders(after), 401, 'invalid_token');
    await expectError(
      await clientCredentials(s.gw.url, { ...client, clientSecret: secret }),
      401,
      'invalid_client',
    );
  });
});
