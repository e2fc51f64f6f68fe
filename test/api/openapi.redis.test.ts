/**
 * The OpenAPI document is the truth about the gateway's own endpoints: every
 * operation and every status it lists is driven here against running
 * gateways, each answer is validated against the document's schema (ajv,
 * JSON Schema 2020-12 as OpenAPI 3.1 uses it), any status the document does
 * not list for that operation fails the test, and the last test fails for a
 * listed status nothing produced. The document itself is checked against the
 * OpenAPI 3.1 schema, served at /.well-known/openapi.json, and committed as
 * docs/openapi.json (`npm run docs`).
 */
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Redis } from 'ioredis';
import { decodeJwt, importJWK, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../src/api/openapi.js';
import { renderOpenApi } from '../../scripts/openapi.js';
import { basic, bearer, startTestGateway, type TestGateway } from '../support/gateway.js';
import {
  ALICE,
  BOB,
  startIdentityFixture,
  tokenFor,
  type RedisIdentityFixture,
} from '../support/identity-fixture.js';
import { clientToken, makeClient, type MachineClient } from '../support/machine-client.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import { makeTestCa, startTestIdp, type TestCa, type TestIdp } from '../support/oidc-idp.js';
import { DOC, documentedCall, type DocumentedRequest } from '../support/openapi-answers.js';
import { verifyDomains } from '../support/verified-domains.js';
import { PASSKEY_CONFIG } from '../support/passkey-requests.js';
import { createPasskey, type CreationOptions } from '../support/soft-authenticator.js';
import { SESSIONS, hiddenField } from '../support/sign-in-page.js';
import { codeAt, enrolTotp, totpConfig } from '../support/totp.js';
import { followLink, PUBLIC_URL } from '../support/account-mail.js';
import { startMailInbox, type MailInbox } from '../support/mail-inbox.js';

/** `operationId status` of every answer seen. */
const seen = new Set<string>();

let fx: RedisIdentityFixture;
/** Signup disabled. */
let closed: TestGateway;
/** One wrong password per e-mail and one signup per address, then 429. */
let strict: TestGateway;
let redis: Redis;
let prefix: string;
let machine: MachineClient;
/** `sso.enabled`, acme's identity provider an `oidc-provider` of its own: the browser sign-in. */
let sso: TestGateway;
/** Passkeys on (`publicUrl` and `mfa.passkeys`, issue 45), on the same store. */
let pk: TestGateway;
/** Mail on (`publicUrl`, `mail`: invitations, verification, password reset; issue 45), on the same store. */
let mail: TestGateway;
let inbox: MailInbox;
let ca: TestCa;
let idp: TestIdp;
let dns: TestDnsServer;
const APP = 'https://app.example.test/signed-in';
const IDP_CLIENT = { clientId: 'gateway-acme', clientSecret: 'unused-0123456789abcdef' };

beforeAll(async () => {
  dns = await startDnsServer();
  fx = await startIdentityFixture({
    sso: { dnsServers: [dns.address] },
    routes: [
      { prefix: '/orders', tenant: { path: '/orders/:tenant_id' } },
      { prefix: '/org-only', tenantTypes: ['orgtenant'] },
    ],
    tokens: { refresh: { enabled: true } },
    // The admin's role holds what their machine client is given below.
    authorization: { roles: { admin: ['catalog:read'] } },
    sessions: SESSIONS,
    mfa: totpConfig(),
  });
  closed = await startTestGateway({ ...fx.config, signup: { enabled: false } });
  strict = await startTestGateway({
    ...fx.config,
    limits: {
      login: { perEmail: 1, windowSeconds: 600 },
      signup: { perIp: 1, windowSeconds: 3600 },
      secondFactor: { perUser: 1, windowSeconds: 600 },
    },
  });
  prefix = (fx.config.store as { redis: { keyPrefix: string } }).redis.keyPrefix;
  redis = new Redis(fx.redis.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  await redis.connect();
  machine = await makeClient(fx.gw.gateway.store, 'acme', ['orders:read']);
  ca = makeTestCa();
  idp = await startTestIdp({ ca, alg: 'ES256', clients: [IDP_CLIENT], accounts: {} });
  sso = await startTestGateway({
    ...fx.config,
    // The test IdP is on loopback.
    sso: { enabled: true, ca: ca.caFile, redirectUris: [APP], allowPrivateIssuers: true },
    // The company sign-in into a session and the back-channel logout (issue 44).
    sessions: { enabled: true, cookie: { secure: false } },
    // Six sign-ins started, then 429; nine requests that may reach the IdP, then 429.
    limits: {
      ssoLogin: { perIp: 6, windowSeconds: 600 },
      exchange: { perIp: 9, windowSeconds: 600 },
    },
  });
  pk = await startTestGateway({ ...fx.config, ...PASSKEY_CONFIG });
  inbox = await startMailInbox();
  mail = await startTestGateway({
    ...fx.config,
    publicUrl: PUBLIC_URL,
    mail: { smtp: inbox.smtpUrl, from: 'gw@example.test', attempts: 1 },
    limits: { passwordReset: { perEmail: 3, perIp: 8, windowSeconds: 600 } },
  });
}, 60_000);
afterAll(async () => {
  redis.disconnect();
  await Promise.all([closed.close(), strict.close(), sso?.close(), pk?.close(), mail?.close()]);
  await inbox?.close();
  await idp?.close();
  ca?.close();
  await fx.close();
  await dns?.stop();
});

/** A valid logout token of acme's IdP (issue 44), naming nobody the gateway knows. */
async function logoutToken(): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    events: { 'http://schemas.openid.net/event/backchannel-logout': {} },
    sub: 'nobody-here',
    jti: `jti-${Math.random()}`,
  })
    .setProtectedHeader({ alg: 'ES256', kid: idp.keys[0]?.kid as string })
    .setIssuer(idp.issuer)
    .setAudience(IDP_CLIENT.clientId)
    .setIssuedAt(now)
    .sign(await importJWK(idp.keys[0] as JWK, 'ES256'));
}

function backchannel(gw: TestGateway, token: string) {
  return call(gw, 'POST', '/1/sso/backchannel-logout', {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ logout_token: token }).toString(),
  });
}

/** Sends the request, then holds the answer against the document. */
async function call(
  gw: TestGateway,
  method: string,
  target: string,
  init: DocumentedRequest = {},
): Promise<{ status: number; body: unknown; headers: Headers }> {
  const answer = await documentedCall(gw.url, method, target, init);
  seen.add(`${answer.operationId} ${answer.status}`);
  return answer;
}

const auth = (who: { email: string; password: string }) => ({
  authorization: basic(who.email, who.password),
});
const wrong = (who: { email: string }) => ({ authorization: basic(who.email, 'not-the-password') });
/** A method, a path and maybe a JSON body. */
type Call = [string, string, string?];

/**
 * Every machine-client operation once: on the tenant's `list` (skipped when
 * undefined) and on `client`, with a valid body where there is one.
 */
async function callEveryClientOperation(
  headers: Record<string, string>,
  list: string | undefined,
  client: string,
): Promise<void> {
  const creation = JSON.stringify({ name: 'x', scopes: [] });
  const calls: Call[] = [
    ...(list === undefined
      ? []
      : ([
          ['GET', list],
          ['POST', list, creation],
        ] as Call[])),
    ['GET', client],
    ['POST', `${client}/secret`],
    ['GET', `${client}/keys`],
    ['POST', `${client}/keys`, '{}'],
    ['DELETE', `${client}/keys/tgkid_aaaaaaaaaaaaaaaa`],
    ['DELETE', client],
  ];
  for (const [method, path, body] of calls)
    await call(fx.gw, method, path, { headers, ...(body === undefined ? {} : { body }) });
}
const VERIFY_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
/** A client-credentials request, `client_secret_post`. */
const grant = (client: MachineClient, secret = client.clientSecret) => ({
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: client.clientId,
    client_secret: secret,
  }).toString(),
});
/** A form POST of `fields` (the refresh grant, RFC 7009 revocation). */
const formOf = (fields: Record<string, string>) => ({
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
});
const TOO_LARGE = JSON.stringify({ password: 'x'.repeat(20_000) });
/** A registration answer of the right shape (the store is asked before it is verified). */
const PASSKEY_ANSWER = {
  response: {
    id: 'AAAA',
    rawId: 'AAAA',
    type: 'public-key',
    response: { clientDataJSON: 'AAAA', attestationObject: 'AAAA' },
    clientExtensionResults: {},
  },
};

/** The sign-in page of `gw` (its 200 recorded): its pre-session cookie and form token. */
async function signInForm(gw: TestGateway): Promise<{ cookie: string; token: string }> {
  const page = await call(gw, 'GET', '/1/sign-in?return_to=%2Fapp');
  return {
    cookie: (page.headers.get('set-cookie') as string).split(';')[0] as string,
    token: hiddenField(page.body as string, 'csrf_token') as string,
  };
}

/** A same-origin post of the sign-in form with `fields`. */
function signInPost(
  gw: TestGateway,
  form: { cookie: string; token: string },
  fields: Record<string, string>,
) {
  return call(gw, 'POST', '/1/sign-in', {
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: form.cookie,
      'sec-fetch-site': 'same-origin',
    },
    body: new URLSearchParams({ csrf_token: form.token, ...fields }).toString(),
  });
}

/** A sign-out post (same origin unless `site` says otherwise). */
function signOutPost(gw: TestGateway, cookie: string, body = '', site = 'same-origin') {
  return call(gw, 'POST', '/1/sign-out', {
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie,
      'sec-fetch-site': site,
    },
    body,
  });
}

/** The session cookie a 303 of the sign-in set, as a `Cookie` pair. */
const sessionOf = (answer: { headers: Headers }) =>
  (answer.headers.getSetCookie().find((c) => c.startsWith('tg_session=')) as string).split(
    ';',
  )[0] as string;

describe('the document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(openApiDocument());
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('is served at /.well-known/openapi.json and committed as docs/openapi.json', async () => {
    const { body } = await call(fx.gw, 'GET', '/.well-known/openapi.json');
    expect(body).toEqual(openApiDocument());
    const committed = readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8');
    expect(committed, 'docs/openapi.json is stale: run `npm run docs`').toBe(renderOpenApi());
  });
});

describe('every operation, every status', () => {
  it('answers as documented when all goes well', async () => {
    await call(fx.gw, 'GET', '/.well-known/jwks.json');
    await call(fx.gw, 'GET', '/.well-known/oauth-authorization-server');
    await call(fx.gw, 'POST', '/1/oauth/token', grant(machine));
    await call(fx.gw, 'GET', '/1/users/current/tenants', { headers: auth(ALICE) });
    await call(fx.gw, 'GET', '/1/token?tenant_id=acme', { headers: auth(ALICE) });
    await call(fx.gw, 'GET', '/1/oauth/token?tenant_id=acme', { headers: auth(ALICE) });
    const token = (await tokenFor(fx.gw.url, ALICE, 'acme')).access_token;
    await call(fx.gw, 'GET', '/1/tenants/current', { headers: { authorization: bearer(token) } });
    for (const method of VERIFY_METHODS)
      await call(fx.gw, method, '/auth/verify', {
        headers: { authorization: bearer(token), 'x-original-uri': '/orders/acme/1' },
      });
    await call(fx.gw, 'GET', '/1/sessions', { headers: { authorization: bearer(token) } });
    const otherLogin = (await tokenFor(fx.gw.url, ALICE, 'acme')).access_token;
    await call(fx.gw, 'DELETE', `/1/sessions/${decodeJwt(otherLogin).fid as string}`, {
      headers: { authorization: bearer(token) },
    });
    await call(fx.gw, 'DELETE', '/1/token', { headers: { authorization: bearer(token) } });
    const refreshToken = (await tokenFor(fx.gw.url, ALICE, 'acme')).refresh_token as string;
    const { body: refreshed } = await call(
      fx.gw,
      'POST',
      '/1/oauth/token',
      formOf({ grant_type: 'refresh_token', refresh_token: refreshToken }),
    );
    const successor = (refreshed as { refresh_token: string }).refresh_token;
    await call(fx.gw, 'POST', '/1/oauth/revoke', formOf({ token: successor }));

    const carol = { email: 'carol@example.com', password: 'carol-password-1' };
    const { body } = await call(fx.gw, 'POST', '/1/users', { body: JSON.stringify(carol) });
    await call(fx.gw, 'PUT', `/1/users/${(body as { user_id: string }).user_id}/password`, {
      headers: auth(carol),
      body: JSON.stringify({ password: 'carol-password-2' }),
    });
  });

  it('refuses bad input, bad credentials and other tenants as documented', async () => {
    const token = (await tokenFor(fx.gw.url, ALICE, 'acme')).access_token;
    const bearerOf = { authorization: bearer(token) };
    // 400
    await call(fx.gw, 'GET', '/.well-known/oauth-authorization-server', { host: 'a.example/x?y=' });
    await call(fx.gw, 'GET', '/1/token', { headers: auth(ALICE) });
    await call(fx.gw, 'GET', '/1/oauth/token?tenant_id=acme&tenant_id=globex', {
      headers: auth(ALICE),
    });
    await call(fx.gw, 'POST', '/1/users', { body: '{"email": ' });
    await call(fx.gw, 'POST', '/1/oauth/token', { body: '{"grant_type": "client_credentials"}' });
    await call(
      fx.gw,
      'POST',
      '/1/oauth/token',
      formOf({ grant_type: 'refresh_token', refresh_token: 'tgr_not-a-refresh-token' }),
    );
    await call(fx.gw, 'POST', '/1/oauth/revoke', formOf({}));
    await call(fx.gw, 'PUT', '/1/users/current/password', {
      headers: auth(ALICE),
      body: JSON.stringify({ password: 'short' }),
    });
    for (const method of VERIFY_METHODS)
      await call(fx.gw, method, '/auth/verify', {
        headers: { ...bearerOf, 'x-original-uri': '/orders/acme%2Fglobex/1' },
      });
    // 401
    await call(fx.gw, 'POST', '/1/oauth/token', grant(machine, 'tgs_wrong'));
    await call(fx.gw, 'GET', '/1/users/current/tenants', { headers: wrong(ALICE) });
    await call(fx.gw, 'GET', '/1/token?tenant_id=acme', { headers: wrong(ALICE) });
    await call(fx.gw, 'GET', '/1/oauth/token?tenant_id=acme', {});
    await call(fx.gw, 'PUT', '/1/users/current/password', {
      headers: wrong(ALICE),
      body: JSON.stringify({ password: 'new-password-1' }),
    });
    await call(fx.gw, 'GET', '/1/tenants/current', { headers: { authorization: 'Bearer x.y.z' } });
    await call(fx.gw, 'DELETE', '/1/token', {});
    await call(fx.gw, 'GET', '/1/sessions', {});
    await call(fx.gw, 'DELETE', '/1/sessions/aaaaaaaaaaaaaaaaaaaaaaaaaa', {});
    for (const method of VERIFY_METHODS)
      await call(fx.gw, method, '/auth/verify', {
        headers: { 'x-original-uri': '/orders/acme/1' },
      });
    // 403
    await call(fx.gw, 'GET', '/1/users/someone-else/tenants', { headers: auth(ALICE) });
    await call(fx.gw, 'GET', '/1/token?tenant_id=globex', { headers: auth(ALICE) });
    await call(fx.gw, 'GET', '/1/oauth/token?tenant_id=no-such-tenant', { headers: auth(ALICE) });
    await call(fx.gw, 'GET', '/1/tenants/globex', { headers: bearerOf });
    const machineToken = { authorization: bearer(await clientToken(fx.gw.url, machine)) };
    await call(fx.gw, 'GET', '/1/sessions', { headers: machineToken });
    await call(fx.gw, 'DELETE', '/1/sessions/aaaaaaaaaaaaaaaaaaaaaaaaaa', {
      headers: machineToken,
    });
    // 404: an id no session of the caller's has
    await call(fx.gw, 'DELETE', '/1/sessions/aaaaaaaaaaaaaaaaaaaaaaaaaa', { headers: bearerOf });
    await call(closed, 'POST', '/1/users', {
      body: JSON.stringify({ email: 'dave@example.com', password: 'dave-password-1' }),
    });
    await call(fx.gw, 'PUT', '/1/users/someone-else/password', {
      headers: auth(ALICE),
      body: JSON.stringify({ password: 'new-password-1' }),
    });
    for (const method of VERIFY_METHODS)
      await call(fx.gw, method, '/auth/verify', {
        headers: { ...bearerOf, 'x-original-uri': '/orders/globex/1' },
      });
    // 403 forbidden at forward-auth: a personal (usertenant) token on an org-only route.
    const erin = { email: 'erin@example.com', password: 'erin-password-1' };
    const { body } = await call(fx.gw, 'POST', '/1/users', { body: JSON.stringify(erin) });
    const personal = await tokenFor(fx.gw.url, erin, (body as { tenant_id: string }).tenant_id);
    for (const method of VERIFY_METHODS)
      await call(fx.gw, method, '/auth/verify', {
        headers: {
          authorization: bearer(personal.access_token),
          'x-original-uri': '/org-only/x',
        },
      });
    // 409, 413
    await call(fx.gw, 'POST', '/1/users', {
      body: JSON.stringify({ email: ALICE.email.toUpperCase(), password: 'alice-password-2' }),
    });
    await call(fx.gw, 'POST', '/1/users', { body: TOO_LARGE });
    await call(fx.gw, 'PUT', '/1/users/current/password', { headers: auth(BOB), body: TOO_LARGE });
  });

  it('throttles as documented (429)', async () => {
    const frank = { email: 'frank@example.com', password: 'frank-password-1' };
    await call(fx.gw, 'POST', '/1/users', { body: JSON.stringify(frank) });
    // perEmail 1: the first wrong password is checked (401), then the e-mail is throttled.
    await call(strict, 'GET', '/1/token?tenant_id=acme', { headers: wrong(frank) });
    await call(strict, 'GET', '/1/token?tenant_id=acme', { headers: auth(frank) });
    await call(strict, 'GET', '/1/oauth/token?tenant_id=acme', { headers: auth(frank) });
    await call(strict, 'GET', '/1/users/current/tenants', { headers: auth(frank) });
    await call(strict, 'PUT', '/1/users/current/password', {
      headers: auth(frank),
      body: JSON.stringify({ password: 'frank-password-2' }),
    });
    // A client id's budget is an e-mail's: one wrong secret, then 429.
    const throttled = await makeClient(fx.gw.gateway.store, 'acme', ['orders:read']);
    await call(strict, 'POST', '/1/oauth/token', grant(throttled, 'tgs_wrong'));
    await call(strict, 'POST', '/1/oauth/token', grant(throttled));
    // perIp 1: this address has signed up already (above).
    await call(strict, 'POST', '/1/users', {
      body: JSON.stringify({ email: 'gina@example.com', password: 'gina-password-1' }),
    });
    // The sign-in page spends the Basic login's budgets: frank is throttled there too.
    const throttledPost = await signInPost(strict, await signInForm(strict), frank);
    expect(throttledPost.status).toBe(429);
  });

  it('signs in on the sign-in page and out as documented (sessions.enabled)', async () => {
    await call(fx.gw, 'GET', '/1/sign-in?return_to=%2Fa&return_to=%2Fb');
    const form = await signInForm(fx.gw);
    expect((await signInPost(fx.gw, form, ALICE)).status).toBe(200);
    const signedIn = await signInPost(fx.gw, form, { ...BOB, tenant_id: 'acme' });
    expect(signedIn.status).toBe(303);
    await signInPost(fx.gw, form, { email: BOB.email });
    await signInPost(fx.gw, form, { ...BOB, password: 'not-the-password' });
    await signInPost(fx.gw, { ...form, cookie: 'tg_signin=none' }, BOB);
    await signInPost(fx.gw, form, { ...BOB, password: 'x'.repeat(20_000) });
    const session = sessionOf(signedIn);
    await signOutPost(fx.gw, session, 'return_to=%2Fa&return_to=%2Fb');
    await signOutPost(fx.gw, session, '', 'cross-site');
    expect((await signOutPost(fx.gw, session, 'return_to=%2Fbye')).status).toBe(303);
  });

  it('manages machine clients as documented (tenant admins)', async () => {
    const admin = {
      authorization: bearer((await tokenFor(fx.gw.url, ALICE, 'acme')).access_token),
    };
    const member = { authorization: bearer((await tokenFor(fx.gw.url, BOB, 'acme')).access_token) };
    const clients = '/1/tenants/acme/clients';
    const created = await call(fx.gw, 'POST', clients, {
      headers: admin,
      body: JSON.stringify({ name: 'ci', scopes: ['catalog:read'] }),
    });
    const one = `${clients}/${(created.body as { client_id: string }).client_id}`;
    await call(fx.gw, 'GET', clients, { headers: admin });
    await call(fx.gw, 'GET', one, { headers: admin });
    await call(fx.gw, 'POST', `${one}/secret`, { headers: admin });
    const key = await call(fx.gw, 'POST', `${one}/keys`, { headers: admin, body: '{}' });
    await call(fx.gw, 'GET', `${one}/keys`, { headers: admin });
    await call(fx.gw, 'DELETE', `${one}/keys/${(key.body as { key_id: string }).key_id}`, {
      headers: admin,
    });
    // 400, 413
    await call(fx.gw, 'POST', clients, { headers: admin, body: '{"name": ' });
    await call(fx.gw, 'POST', `${one}/keys`, { headers: admin, body: '{"expires_at": 1}' });
    await call(fx.gw, 'POST', clients, { headers: admin, body: TOO_LARGE });
    await call(fx.gw, 'POST', `${one}/keys`, { headers: admin, body: TOO_LARGE });
    // 401, 403 (a member; another tenant's path), 404 (no such client or key)
    const globex = '/1/tenants/globex/clients';
    for (const [headers, list, client] of [
      [{ authorization: 'Bearer x.y.z' }, clients, one],
      [member, clients, one],
      [admin, globex, `${globex}/tgc_aaaaaaaaaaaaaaaaaaaaaaaaaa`],
      [admin, undefined, `${clients}/tgc_aaaaaaaaaaaaaaaaaaaaaaaaaa`],
    ] as const)
      await callEveryClientOperation(headers, list, client);
    // 404 for the tenant's own list and creation: the tenant removed after the token.
    const store = fx.gw.gateway.store;
    const alice = await store.users.findUserByEmail(ALICE.email);
    await store.tenants.upsertTenant(
      {
        tenantId: 'initech',
        type: 'orgtenant',
        name: 'Initech',
        cloudRegion: 'eu',
        createdBy: ALICE.email,
      },
      Math.floor(Date.now() / 1000),
    );
    await store.memberships.addMember('initech', alice?.id as string, 'admin');
    const initech = {
      authorization: bearer((await tokenFor(fx.gw.url, ALICE, 'initech')).access_token),
    };
    await redis.del(`${prefix}{dir}:tenant:initech`);
    await call(fx.gw, 'GET', '/1/tenants/current/clients', { headers: initech });
    await call(fx.gw, 'POST', '/1/tenants/current/clients', {
      headers: initech,
      body: JSON.stringify({ name: 'x', scopes: [] }),
    });
    // 500: a corrupt tenant record.
    await redis.hset(`${prefix}{dir}:tenant:acme`, 'type', 'not-a-type');
    await callEveryClientOperation(admin, clients, one);
    await redis.hset(`${prefix}{dir}:tenant:acme`, 'type', 'orgtenant');
    await call(fx.gw, 'DELETE', one, { headers: admin });
  });

  it("manages a tenant's identity provider as documented (tenant admins)", async () => {
    const admin = {
      authorization: bearer((await tokenFor(fx.gw.url, ALICE, 'acme')).access_token),
    };
    const member = { authorization: bearer((await tokenFor(fx.gw.url, BOB, 'acme')).access_token) };
    const globexAdmin = {
      authorization: bearer((await tokenFor(fx.gw.url, BOB, 'globex')).access_token),
    };
    const idp = '/1/tenants/acme/idp';
    const settings = (issuer: string, domain = 'acme.example') =>
      JSON.stringify({ issuer, client_id: 'gw', domains: [domain] });
    await verifyDomains(fx.gw.gateway.store, 'acme', ['acme.example']);
    await verifyDomains(fx.gw.gateway.store, 'globex', ['globex.example']);
    await call(fx.gw, 'GET', idp, { headers: admin }); // 404: none yet
    await call(fx.gw, 'DELETE', idp, { headers: admin }); // 404: none yet
    await call(fx.gw, 'PUT', idp, { headers: admin, body: settings('https://idp.acme.example') });
    await call(fx.gw, 'PUT', idp, { headers: admin, body: settings('https://idp.acme.example') });
    await call(fx.gw, 'GET', idp, { headers: admin });
    // 400 (no sso.secretsKeyFile here: a secret is refused too), 413, 409
    await call(fx.gw, 'PUT', idp, { headers: admin, body: settings('http://idp.acme.example') });
    await call(fx.gw, 'PUT', idp, {
      headers: admin,
      body: JSON.stringify({ ...JSON.parse(settings('https://x.example')), client_secret: 's' }),
    });
    await call(fx.gw, 'PUT', idp, { headers: admin, body: TOO_LARGE });
    await call(fx.gw, 'PUT', '/1/tenants/globex/idp', {
      headers: globexAdmin,
      body: settings('https://idp.acme.example', 'globex.example'),
    });
    // 400 domain_not_verified
    await call(fx.gw, 'PUT', idp, {
      headers: admin,
      body: settings('https://idp.acme.example', 'unverified.example'),
    });
    // 401, 403 (a member; another tenant's admin)
    for (const headers of [{ authorization: 'Bearer x.y.z' }, member, globexAdmin]) {
      await call(fx.gw, 'GET', idp, { headers });
      await call(fx.gw, 'PUT', idp, { headers, body: settings('https://idp.acme.example') });
      await call(fx.gw, 'DELETE', idp, { headers });
    }
    // 500: a corrupt tenant record.
    await redis.hset(`${prefix}{dir}:tenant:acme`, 'type', 'not-a-type');
    await call(fx.gw, 'GET', idp, { headers: admin });
    await call(fx.gw, 'PUT', idp, { headers: admin, body: settings('https://idp.acme.example') });
    await call(fx.gw, 'DELETE', idp, { headers: admin });
    await redis.hset(`${prefix}{dir}:tenant:acme`, 'type', 'orgtenant');
    await call(fx.gw, 'DELETE', idp, { headers: admin });
    // 404 for a set: the tenant gone after the token was issued (its record set aside).
    await redis.rename(`${prefix}{dir}:tenant:acme`, `${prefix}{dir}:tenant:acme-aside`);
    await call(fx.gw, 'PUT', '/1/tenants/current/idp', {
      headers: admin,
      body: settings('https://idp.acme.example'),
    });
    await redis.rename(`${prefix}{dir}:tenant:acme-aside`, `${prefix}{dir}:tenant:acme`);
  });

  it("manages a tenant's e-mail domains as documented (tenant admins)", async () => {
    const admin = {
      authorization: bearer((await tokenFor(fx.gw.url, ALICE, 'acme')).access_token),
    };
    const member = { authorization: bearer((await tokenFor(fx.gw.url, BOB, 'acme')).access_token) };
    const globexAdmin = {
      authorization: bearer((await tokenFor(fx.gw.url, BOB, 'globex')).access_token),
    };
    const domains = '/1/tenants/acme/domains';
    const claim = (domain: string) => JSON.stringify({ domain });
    await call(fx.gw, 'GET', domains, { headers: admin });
    const claimed = await call(fx.gw, 'POST', domains, {
      headers: admin,
      body: claim('docs.example'),
    }); // 201
    await call(fx.gw, 'POST', domains, { headers: admin, body: claim('docs.example') }); // 200
    await call(fx.gw, 'POST', `${domains}/docs.example/verify`, { headers: admin }); // 400: no TXT
    const { txt_name: name, txt_value: value } = claimed.body as Record<string, string>;
    dns.setTxt(name as string, [value as string]);
    await call(fx.gw, 'POST', `${domains}/docs.example/verify`, { headers: admin }); // 200
    await call(fx.gw, 'POST', `${domains}/nothing.example/verify`, { headers: admin }); // 404
    await call(fx.gw, 'POST', domains, { headers: admin, body: claim('not a domain') }); // 400
    await call(fx.gw, 'POST', domains, { headers: admin, body: TOO_LARGE }); // 413
    // 409: another tenant's verified domain, claimed and verified.
    await call(fx.gw, 'POST', '/1/tenants/globex/domains', {
      headers: globexAdmin,
      body: claim('docs.example'),
    });
    await call(fx.gw, 'POST', '/1/tenants/globex/domains', {
      headers: globexAdmin,
      body: claim('race.example'),
    });
    await verifyDomains(fx.gw.gateway.store, 'acme', ['race.example']);
    await call(fx.gw, 'POST', '/1/tenants/globex/domains/race.example/verify', {
      headers: globexAdmin,
    });
    await call(fx.gw, 'DELETE', `${domains}/not_a_domain!`, { headers: admin }); // 400
    await call(fx.gw, 'DELETE', `${domains}/docs.example`, { headers: admin }); // 204
    await call(fx.gw, 'DELETE', `${domains}/docs.example`, { headers: admin }); // 404
    // 401, 403 (a member; another tenant's admin)
    for (const headers of [{ authorization: 'Bearer x.y.z' }, member, globexAdmin]) {
      await call(fx.gw, 'GET', domains, { headers });
      await call(fx.gw, 'POST', domains, { headers, body: claim('x.example') });
      await call(fx.gw, 'POST', `${domains}/x.example/verify`, { headers });
      await call(fx.gw, 'DELETE', `${domains}/x.example`, { headers });
    }
    // 500: a corrupt tenant record.
    await redis.hset(`${prefix}{dir}:tenant:acme`, 'type', 'not-a-type');
    await call(fx.gw, 'GET', domains, { headers: admin });
    await call(fx.gw, 'POST', domains, { headers: admin, body: claim('x.example') });
    await call(fx.gw, 'POST', `${domains}/x.example/verify`, { headers: admin });
    await call(fx.gw, 'DELETE', `${domains}/x.example`, { headers: admin });
    await redis.hset(`${prefix}{dir}:tenant:acme`, 'type', 'orgtenant');
    // 404: the tenant gone after the token was issued (its record set aside).
    await redis.rename(`${prefix}{dir}:tenant:acme`, `${prefix}{dir}:tenant:acme-aside`);
    await call(fx.gw, 'GET', domains, { headers: admin });
    await call(fx.gw, 'POST', domains, { headers: admin, body: claim('x.example') });
    await redis.rename(`${prefix}{dir}:tenant:acme-aside`, `${prefix}{dir}:tenant:acme`);
  });

  it('signs in through a browser as documented (sso.enabled)', async () => {
    // Taken away at the end: the IdP operations' 404s want acme without one.
    await sso.gateway.store.idps.setTenantIdp({
      tenantId: 'acme',
      issuer: idp.issuer,
      clientId: IDP_CLIENT.clientId,
      domains: ['acme.test'],
      role: 'member',
      linkExisting: false,
      updatedAt: Math.floor(Date.now() / 1000),
    });
    // Issue 44, first: three sign-ins started at /1/sign-in/sso and a callback (four IdP points).
    const company = await call(sso, 'GET', '/1/sign-in/sso?tenant_id=acme&return_to=/x');
    expect(company.status, JSON.stringify(company.body)).toBe(302);
    const companyState = new URL(company.headers.get('location') as string).searchParams.get(
      'state',
    );
    const back = await call(
      sso,
      'GET',
      `/1/sso/callback?state=${companyState as string}&error=access_denied`,
      {
        headers: { cookie: (company.headers.get('set-cookie') as string).split(';')[0] as string },
      },
    );
    expect(back.status).toBe(303);
    await call(sso, 'GET', '/1/sign-in/sso?email=someone@nowhere.test');
    await call(sso, 'GET', '/1/sign-in/sso?email=a@acme.test&email=b@acme.test');
    expect((await backchannel(sso, await logoutToken())).status).toBe(200);
    expect((await backchannel(sso, 'not.a.token')).status).toBe(400);

    const pkce = `code_challenge=${'a'.repeat(43)}&code_challenge_method=S256`;
    const login = `/1/tenants/acme/sso/login?redirect_uri=${encodeURIComponent(APP)}&${pkce}`;
    const started = await call(sso, 'GET', login);
    expect(started.status, JSON.stringify(started.body)).toBe(302);
    const state = new URL(started.headers.get('location') as string).searchParams.get('state');
    const cookie = (started.headers.get('set-cookie') as string).split(';')[0] as string;
    await call(sso, 'GET', `/1/sso/callback?state=${state as string}&error=access_denied`, {
      headers: { cookie },
    });
    await call(sso, 'GET', `/1/sso/callback?state=${state as string}&code=x`);
    await call(sso, 'GET', '/1/tenants/acme/sso/login?redirect_uri=https://evil.example/');
    await call(sso, 'GET', login);
    expect((await call(sso, 'GET', login)).status).toBe(429);
    // limits.exchange spent by the five before (logins and callbacks): the callback's 429.
    expect((await call(sso, 'GET', `/1/sso/callback?state=${state as string}`)).status).toBe(429);
    expect((await call(sso, 'GET', '/1/sign-in/sso?tenant_id=acme')).status).toBe(429);
    await call(sso, 'POST', '/1/oauth/token', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=authorization_code&code=made-up&redirect_uri=${encodeURIComponent(APP)}`,
    });
    await sso.gateway.store.idps.removeTenantIdp('acme');
  });

  it("manages a user's TOTP factor as documented (mfa.totp.enabled)", async () => {
    const who = { email: 'tom@example.com', password: 'tom-password-1' };
    await call(fx.gw, 'POST', '/1/users', { body: JSON.stringify(who) });
    const headers = auth(who);
    const wrongPassword = auth({ ...who, password: 'tom-password-x' });
    const totp = '/1/users/current/mfa/totp';
    const confirmPath = `${totp}/confirm`;
    const code = (value: string) => JSON.stringify({ code: value });
    // 404 (nothing to remove), 401, 403
    await call(fx.gw, 'DELETE', totp, { headers });
    await call(fx.gw, 'DELETE', totp, { headers: wrongPassword });
    await call(fx.gw, 'DELETE', '/1/users/u-someone-else/mfa/totp', { headers });
    await call(fx.gw, 'POST', totp, { headers: wrongPassword });
    await call(fx.gw, 'POST', '/1/users/u-someone-else/mfa/totp', { headers });
    const begun = await call(fx.gw, 'POST', totp, { headers });
    const secret = (begun.body as { secret: string }).secret;
    await call(fx.gw, 'POST', confirmPath, { headers, body: code('000000') });
    await call(fx.gw, 'POST', confirmPath, { headers: wrongPassword, body: code('000000') });
    await call(fx.gw, 'POST', '/1/users/u-someone-else/mfa/totp/confirm', {
      headers,
      body: code('000000'),
    });
    await call(fx.gw, 'POST', confirmPath, { headers, body: TOO_LARGE });
    const confirmed = await call(fx.gw, 'POST', confirmPath, {
      headers,
      body: code(await codeAt(secret)),
    });
    const codes = (confirmed.body as { recovery_codes: string[] }).recovery_codes;
    // 401 mfa_required, then 204 with a recovery code.
    await call(fx.gw, 'DELETE', totp, { headers });
    await call(fx.gw, 'DELETE', totp, { headers: { ...headers, 'x-otp': codes[0] as string } });
    // 429: one wrong code per user on `strict`, then every route refuses, however right.
    const tess = { email: 'tess@example.com', password: 'tess-password-1' };
    await call(fx.gw, 'POST', '/1/users', { body: JSON.stringify(tess) });
    await enrolTotp(fx.gw.url, tess);
    const tessWrong = { ...auth(tess), 'x-otp': '000000' };
    await call(strict, 'POST', totp, { headers: tessWrong });
    await call(strict, 'POST', totp, { headers: tessWrong });
    await call(strict, 'POST', confirmPath, { headers: tessWrong, body: code('000000') });
    await call(strict, 'DELETE', totp, { headers: tessWrong });
  });

  it("answers the console's own calls as documented (issue 46)", async () => {
    const session = sessionOf(
      await signInPost(fx.gw, await signInForm(fx.gw), { ...BOB, tenant_id: 'acme' }),
    );
    const same = { cookie: session, 'sec-fetch-site': 'same-origin' };
    const admin = {
      authorization: bearer((await tokenFor(fx.gw.url, ALICE, 'acme')).access_token),
    };
    const member = { authorization: bearer((await tokenFor(fx.gw.url, BOB, 'acme')).access_token) };
    const machineToken = { authorization: bearer(await clientToken(fx.gw.url, machine)) };
    await call(fx.gw, 'GET', '/1/users/current', { headers: same });
    await call(fx.gw, 'GET', '/1/users/current', {});
    await call(fx.gw, 'GET', '/1/users/current', { headers: machineToken });
    await call(fx.gw, 'GET', '/1/tenants/acme/audit?type=client_created', { headers: admin });
    await call(fx.gw, 'GET', '/1/tenants/acme/audit?limit=0', { headers: admin });
    await call(fx.gw, 'GET', '/1/tenants/acme/audit', {});
    await call(fx.gw, 'GET', '/1/tenants/acme/audit', { headers: member });
    await call(fx.gw, 'POST', '/1/sessions', { headers: same, body: '{"tenant_id": 1}' });
    await call(fx.gw, 'POST', '/1/sessions', { headers: same, body: TOO_LARGE });
    await call(fx.gw, 'POST', '/1/sessions', { body: '{"tenant_id": "globex"}' });
    await call(fx.gw, 'POST', '/1/sessions', { headers: admin, body: '{"tenant_id": "globex"}' });
    await call(fx.gw, 'POST', '/1/sessions', { headers: same, body: '{"tenant_id": "globex"}' });
  });

  it("manages members and invitations, and mails the accounts' links, as documented (issue 45)", async () => {
    const gw = mail;
    const at = (method: string, target: string, init: DocumentedRequest = {}) =>
      call(gw, method, target, init);
    const admin = { authorization: bearer((await tokenFor(gw.url, ALICE, 'acme')).access_token) };
    const member = { authorization: bearer((await tokenFor(gw.url, BOB, 'acme')).access_token) };
    const store = gw.gateway.store;
    const bob = (await store.users.findUserByEmail(BOB.email))?.id as string;
    const members = '/1/tenants/acme/members';
    const role = (value: string) => JSON.stringify({ role: value });
    for (const headers of [admin, {}, member]) await at('GET', members, { headers });
    await at('PUT', `${members}/${bob}`, { headers: admin, body: role('member') });
    await at('PUT', `${members}/${bob}`, { headers: admin, body: role('owner') });
    await at('PUT', `${members}/${bob}`, { body: role('member') });
    await at('PUT', `${members}/${bob}`, { headers: member, body: role('admin') });
    await at('PUT', `${members}/u-nobody`, { headers: admin, body: role('member') });
    await at('PUT', `${members}/${bob}`, { headers: admin, body: TOO_LARGE });
    for (const headers of [{}, member]) await at('DELETE', `${members}/${bob}`, { headers });
    const leaving = { email: 'lou@example.com', password: 'lou-password-1' };
    const lou = await fetch(`${gw.url}/1/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(leaving),
    });
    const louId = ((await lou.json()) as { user_id: string }).user_id;
    await store.memberships.addMember('acme', louId, 'member');
    await at('DELETE', `${members}/${louId}`, { headers: admin });
    await at('DELETE', `${members}/u-nobody`, { headers: admin });

    const invitations = '/1/tenants/acme/invitations';
    const invite = (email: string) => JSON.stringify({ email, role: 'member' });
    const linkTo = async (email: string) => {
      const received = await inbox.next(email);
      return new URL(received.links.find((l) => l.includes('/1/invitations/')) as string).pathname;
    };
    const made = await at('POST', invitations, {
      headers: admin,
      body: invite('iris@example.com'),
    });
    await linkTo('iris@example.com');
    await at('POST', invitations, { headers: admin, body: invite('not an address') });
    await at('POST', invitations, { body: invite('x@example.com') });
    await at('POST', invitations, { headers: member, body: invite('x@example.com') });
    await at('POST', invitations, { headers: admin, body: invite(BOB.email) });
    await at('POST', invitations, { headers: admin, body: TOO_LARGE });
    for (const headers of [admin, {}, member]) await at('GET', invitations, { headers });
    const one = `${invitations}/${(made.body as { invitation_id: string }).invitation_id}`;
    for (const headers of [admin, {}, member]) await at('DELETE', one, { headers });
    await at('DELETE', one, { headers: admin });

    // The invitee's side: the page, a sign-up through it, an accept by Basic.
    await at('POST', invitations, { headers: admin, body: invite('jude@example.com') });
    const page = await linkTo('jude@example.com');
    const html = { accept: 'text/html' };
    await at('GET', page, { headers: html });
    await at('GET', '/1/invitations/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', {
      headers: html,
    });
    const formPost = (body: Record<string, string>, site = 'same-origin') =>
      at('POST', page, {
        headers: {
          ...html,
          'content-type': 'application/x-www-form-urlencoded',
          'sec-fetch-site': site,
        },
        body: new URLSearchParams(body).toString(),
      });
    await formPost({ action: 'sign-up', password: 'short' });
    await formPost({ action: 'accept' });
    await formPost({ action: 'sign-up', password: 'jude-password-1' }, 'cross-site');
    await formPost({ action: 'sign-up', password: 'jude-password-1' });
    await formPost({ action: 'sign-up', password: 'jude-password-1' });
    await at('POST', invitations, { headers: admin, body: invite('kim@example.com') });
    const kimLink = await linkTo('kim@example.com');
    const kim = { email: 'kim@example.com', password: 'kim-password-1' };
    const signedUp = await fetch(`${gw.url}/1/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(kim),
    });
    await store.users.markEmailVerified(
      ((await signedUp.json()) as { user_id: string }).user_id,
      1,
    );
    await inbox.next(kim.email);
    await at('POST', kimLink, {
      headers: {
        ...html,
        'content-type': 'application/x-www-form-urlencoded',
        'sec-fetch-site': 'same-origin',
      },
      body: new URLSearchParams({ action: 'sign-up', password: 'kim-password-1' }).toString(),
    });
    await at('POST', `${kimLink}/accept`, {});
    await at('POST', `${kimLink}/accept`, { headers: auth(ALICE) });
    await at('POST', `${kimLink}/accept`, { headers: auth(kim) });
    await at('POST', `${kimLink}/accept`, { headers: auth(kim) });
  });

  it('verifies addresses and resets passwords by mailed links as documented (issue 45)', async () => {
    const gw = mail;
    const at = (method: string, target: string, init: DocumentedRequest = {}) =>
      call(gw, method, target, init);
    const pathOf = async (email: string, prefix: string) =>
      new URL(followLink(await inbox.next(email), prefix, gw.url)).pathname;
    const none = 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    const form = (body: Record<string, string>) => ({
      headers: {
        accept: 'text/html',
        'content-type': 'application/x-www-form-urlencoded',
        'sec-fetch-site': 'same-origin',
      },
      body: new URLSearchParams(body).toString(),
    });
    const lee = { email: 'lee@example.com', password: 'lee-password-1' };
    const max = { email: 'max@example.com', password: 'max-password-1' };
    for (const who of [lee, max])
      await fetch(`${gw.url}/1/users`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(who),
      });
    const leeLink = await pathOf(lee.email, '/1/email-verifications');
    await at('GET', leeLink);
    await at('GET', `/1/email-verifications/${none}`);
    await at('POST', leeLink);
    await at('POST', leeLink);
    await at('POST', await pathOf(max.email, '/1/email-verifications'), form({}));

    await at('GET', '/1/password-resets');
    const ask = (body: string) => at('POST', '/1/password-resets', { body });
    await ask(JSON.stringify({ email: lee.email }));
    await ask(JSON.stringify({ email: 'not an address' }));
    await ask(TOO_LARGE);
    const reset = await pathOf(lee.email, '/1/password-resets');
    await at('GET', reset);
    await at('GET', `/1/password-resets/${none}`);
    await at('POST', reset, { body: JSON.stringify({ password: 'short' }) });
    await at('POST', reset, { body: TOO_LARGE });
    await at('POST', reset, { body: JSON.stringify({ password: 'lee-password-2' }) });
    await at('POST', reset, { body: JSON.stringify({ password: 'lee-password-3' }) });
    await ask(JSON.stringify({ email: max.email }));
    await at(
      'POST',
      await pathOf(max.email, '/1/password-resets'),
      form({ password: 'max-password-2' }),
    );
    // Past `limits.passwordReset.perIp` (this gateway's: 8): 429.
    for (let i = 0; i < 12; i++) {
      if ((await ask(JSON.stringify({ email: 'nobody@example.com' }))).status === 429) break;
    }
  });

  it('answers 500 for a corrupt record and 404 for a removed tenant', async () => {
    const acme = `${prefix}{dir}:tenant:acme`;
    const token = (await tokenFor(fx.gw.url, ALICE, 'acme')).access_token;
    const bobGlobex = (await tokenFor(fx.gw.url, BOB, 'globex')).access_token;
    await redis.hset(acme, 'type', 'not-a-type');
    await call(fx.gw, 'GET', '/1/users/current/tenants', { headers: auth(ALICE) });
    await call(fx.gw, 'GET', '/1/token?tenant_id=acme', { headers: auth(ALICE) });
    await call(fx.gw, 'GET', '/1/oauth/token?tenant_id=acme', { headers: auth(ALICE) });
    await call(fx.gw, 'GET', '/1/tenants/current', { headers: { authorization: bearer(token) } });
    await call(fx.gw, 'GET', '/1/tenants/acme/audit', {
      headers: { authorization: bearer(token) },
    });
    const admin = { headers: { authorization: bearer(token) } };
    const role = JSON.stringify({ role: 'member' });
    await call(mail, 'GET', '/1/tenants/acme/members', admin);
    await call(mail, 'PUT', '/1/tenants/acme/members/u-x', { ...admin, body: role });
    await call(mail, 'DELETE', '/1/tenants/acme/members/u-x', admin);
    await call(mail, 'GET', '/1/tenants/acme/invitations', admin);
    await call(mail, 'POST', '/1/tenants/acme/invitations', {
      ...admin,
      body: JSON.stringify({ email: 'x@example.com', role: 'member' }),
    });
    await call(mail, 'DELETE', '/1/tenants/acme/invitations/inv_x', admin);
    await redis.hset(acme, 'type', 'orgtenant');

    await redis.del(`${prefix}{dir}:tenant:globex`);
    await call(fx.gw, 'GET', '/1/tenants/current', {
      headers: { authorization: bearer(bobGlobex) },
    });
    await call(fx.gw, 'GET', '/1/tenants/globex/audit', {
      headers: { authorization: bearer(bobGlobex) },
    });
    const gone = { headers: { authorization: bearer(bobGlobex) } };
    await call(mail, 'GET', '/1/tenants/globex/members', gone);
    await call(mail, 'GET', '/1/tenants/globex/invitations', gone);
    await call(mail, 'POST', '/1/tenants/globex/invitations', {
      ...gone,
      body: JSON.stringify({ email: 'x@example.com', role: 'member' }),
    });
  });

  it("a user's passkeys and the sign-in page's passkey options: every status", async () => {
    const form = await signInForm(pk);
    const session = sessionOf(await signInPost(pk, form, { ...BOB, tenant_id: 'acme' }));
    const same = { cookie: session, 'sec-fetch-site': 'same-origin' };
    const crossSite = { cookie: session, 'sec-fetch-site': 'cross-site' };
    const passkeys = '/1/users/current/passkeys';
    const options = await call(pk, 'POST', `${passkeys}/options`, { headers: same });
    await call(pk, 'POST', `${passkeys}/options`); // 401
    await call(pk, 'POST', `${passkeys}/options`, { headers: crossSite }); // 403
    const origin = PASSKEY_CONFIG.publicUrl;
    const { response } = createPasskey(options.body as CreationOptions, origin);
    const registered = await call(pk, 'POST', passkeys, {
      headers: same,
      body: JSON.stringify({ response }),
    });
    await call(pk, 'POST', passkeys, { headers: same, body: JSON.stringify({ response }) }); // 400
    await call(pk, 'POST', passkeys, { body: JSON.stringify({ response }) }); // 401
    await call(pk, 'POST', passkeys, { headers: crossSite, body: '{}' }); // 403
    await call(pk, 'POST', passkeys, { headers: same, body: TOO_LARGE }); // 413
    await call(pk, 'GET', passkeys, { headers: same });
    await call(pk, 'GET', passkeys); // 401
    await call(pk, 'GET', '/1/users/someone-else/passkeys', { headers: same }); // 403
    const one = `${passkeys}/${(registered.body as { passkey_id: string }).passkey_id}`;
    await call(pk, 'DELETE', one); // 401
    await call(pk, 'DELETE', one, { headers: crossSite }); // 403
    await call(pk, 'DELETE', one, { headers: same });
    await call(pk, 'DELETE', one, { headers: same }); // 404

    const page = await signInForm(pk);
    const signInOptions = '/1/sign-in/passkey/options';
    const fromPage = {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: page.cookie,
      'sec-fetch-site': 'same-origin',
    };
    await call(pk, 'POST', signInOptions, { headers: fromPage, body: `csrf_token=${page.token}` });
    await call(pk, 'POST', signInOptions, { headers: fromPage, body: 'csrf_token=a&csrf_token=b' }); // 400
    await call(pk, 'POST', signInOptions, formOf({ csrf_token: page.token })); // 403
    await call(pk, 'POST', signInOptions, {
      headers: fromPage,
      body: `csrf_token=${'x'.repeat(20_000)}`,
    }); // 413
  });

  it('answers 503 everywhere the store is needed once it is gone', async () => {
    const { access_token: token, refresh_token: refreshToken } = (await tokenFor(
      fx.gw.url,
      ALICE,
      'acme',
    )) as { access_token: string; refresh_token: string };
    const form = await signInForm(fx.gw);
    const session = sessionOf(await signInPost(fx.gw, form, { ...BOB, tenant_id: 'acme' }));
    const pkForm = await signInForm(pk);
    const pkSession = sessionOf(await signInPost(pk, pkForm, { ...BOB, tenant_id: 'acme' }));
    const moving = sessionOf(
      await signInPost(fx.gw, await signInForm(fx.gw), { ...BOB, tenant_id: 'acme' }),
    );
    await fx.redis.kill();
    const sameSite = { cookie: moving, 'sec-fetch-site': 'same-origin' };
    await call(fx.gw, 'POST', '/1/sessions', { headers: sameSite, body: '{"tenant_id":"globex"}' });
    await signInPost(fx.gw, form, { ...BOB, tenant_id: 'acme' });
    const pkSame = { cookie: pkSession, 'sec-fetch-site': 'same-origin' };
    const passkeys = '/1/users/current/passkeys';
    await call(pk, 'POST', `${passkeys}/options`, { headers: pkSame });
    await call(pk, 'POST', passkeys, { headers: pkSame, body: JSON.stringify(PASSKEY_ANSWER) });
    await call(pk, 'GET', passkeys, { headers: pkSame });
    await call(pk, 'DELETE', `${passkeys}/pk_none`, { headers: pkSame });
    await call(pk, 'POST', '/1/sign-in/passkey/options', {
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: pkForm.cookie,
        'sec-fetch-site': 'same-origin',
      },
      body: `csrf_token=${pkForm.token}`,
    });
    await signOutPost(fx.gw, session);
    await call(fx.gw, 'POST', '/1/oauth/revoke', formOf({ token: refreshToken }));
    const bearerOf = { authorization: bearer(token) };
    await call(fx.gw, 'GET', '/1/users/current/tenants', { headers: auth(ALICE) });
    await call(fx.gw, 'GET', '/1/token?tenant_id=acme', { headers: auth(ALICE) });
    await call(fx.gw, 'GET', '/1/oauth/token?tenant_id=acme', { headers: auth(ALICE) });
    await call(fx.gw, 'GET', '/1/tenants/current', { headers: bearerOf });
    await call(fx.gw, 'DELETE', '/1/token', { headers: bearerOf });
    await call(fx.gw, 'GET', '/1/sessions', { headers: bearerOf });
    await call(fx.gw, 'DELETE', '/1/sessions/aaaaaaaaaaaaaaaaaaaaaaaaaa', { headers: bearerOf });
    await call(fx.gw, 'GET', '/1/users/current', { headers: bearerOf });
    await call(fx.gw, 'GET', '/1/tenants/acme/audit', { headers: bearerOf });
    const token43 = 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    const roleBody = JSON.stringify({ role: 'member' });
    const inviteBody = JSON.stringify({ email: 'x@example.com', role: 'member' });
    const pageForm = {
      'content-type': 'application/x-www-form-urlencoded',
      'sec-fetch-site': 'same-origin',
    };
    for (const [method, path, body] of [
      ['GET', '/1/tenants/acme/members'],
      ['PUT', '/1/tenants/acme/members/u-x', roleBody],
      ['DELETE', '/1/tenants/acme/members/u-x'],
      ['GET', '/1/tenants/acme/invitations'],
      ['POST', '/1/tenants/acme/invitations', inviteBody],
      ['DELETE', '/1/tenants/acme/invitations/inv_x'],
      ['POST', `/1/invitations/${token43}/accept`],
    ] as Call[])
      await call(mail, method, path, {
        headers: bearerOf,
        ...(body === undefined ? {} : { body }),
      });
    await call(mail, 'GET', `/1/invitations/${token43}`);
    await call(mail, 'POST', `/1/invitations/${token43}`, {
      headers: pageForm,
      body: 'action=accept',
    });
    await call(mail, 'GET', `/1/email-verifications/${token43}`);
    await call(mail, 'POST', `/1/email-verifications/${token43}`);
    await call(mail, 'POST', '/1/password-resets', {
      body: JSON.stringify({ email: 'x@example.com' }),
    });
    await call(mail, 'GET', `/1/password-resets/${token43}`);
    await call(mail, 'POST', `/1/password-resets/${token43}`, {
      body: JSON.stringify({ password: 'x-password-1' }),
    });
    await call(fx.gw, 'POST', '/1/oauth/token', grant(machine));
    await call(fx.gw, 'POST', '/1/users', {
      body: JSON.stringify({ email: 'hank@example.com', password: 'hank-password-1' }),
    });
    await call(fx.gw, 'PUT', '/1/users/current/password', {
      headers: auth(BOB),
      body: JSON.stringify({ password: 'bob-password-2' }),
    });
    await call(fx.gw, 'POST', '/1/users/current/mfa/totp', { headers: auth(ALICE) });
    await call(fx.gw, 'POST', '/1/users/current/mfa/totp/confirm', {
      headers: auth(ALICE),
      body: JSON.stringify({ code: '000000' }),
    });
    await call(fx.gw, 'DELETE', '/1/users/current/mfa/totp', { headers: auth(ALICE) });
    for (const method of VERIFY_METHODS)
      await call(fx.gw, method, '/auth/verify', {
        headers: { ...bearerOf, 'x-original-uri': '/orders/acme/1' },
      });
    await callEveryClientOperation(
      bearerOf,
      '/1/tenants/acme/clients',
      '/1/tenants/acme/clients/tgc_aaaaaaaaaaaaaaaaaaaaaaaaaa',
    );
    await call(fx.gw, 'GET', '/1/tenants/acme/idp', { headers: bearerOf });
    await call(fx.gw, 'PUT', '/1/tenants/acme/idp', {
      headers: bearerOf,
      body: JSON.stringify({
        issuer: 'https://x.example',
        client_id: 'gw',
        domains: ['x.example'],
      }),
    });
    await call(fx.gw, 'DELETE', '/1/tenants/acme/idp', { headers: bearerOf });
    await call(fx.gw, 'GET', '/1/tenants/acme/domains', { headers: bearerOf });
    await call(fx.gw, 'POST', '/1/tenants/acme/domains', {
      headers: bearerOf,
      body: JSON.stringify({ domain: 'x.example' }),
    });
    await call(fx.gw, 'POST', '/1/tenants/acme/domains/x.example/verify', { headers: bearerOf });
    await call(fx.gw, 'DELETE', '/1/tenants/acme/domains/x.example', { headers: bearerOf });
    await call(sso, 'GET', `/1/tenants/acme/sso/login?redirect_uri=${encodeURIComponent(APP)}`);
    await call(sso, 'GET', '/1/sso/callback?state=any&code=x');
    await call(sso, 'GET', '/1/sign-in/sso?tenant_id=acme');
    expect((await backchannel(sso, await logoutToken())).status).toBe(503);
    // What needs no store still answers.
    await call(fx.gw, 'GET', '/.well-known/jwks.json');
    await fx.redis.restart();
  });

  it('produced every status the document lists', () => {
    const listed = Object.values(DOC.paths).flatMap((item) =>
      Object.values(item).flatMap((op) =>
        Object.keys(op.responses).map((status) => `${op.operationId} ${status}`),
      ),
    );
    expect(listed.filter((entry) => !seen.has(entry))).toEqual([]);
  });
});
