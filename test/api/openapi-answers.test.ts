/**
 * Real answers against the generated OpenAPI document and the zod
 * declarations it is generated from (`src/api/schemas/*-operations.ts`): on
 * the memory identity fixture, every operation answers once as it does when
 * all goes well and once refused, and each body must be valid against the
 * document's schema for that status (ajv) and parse with the declared zod
 * schema. An answer that drifts from its schema fails here; the last test
 * shows the two checks refuse a drifted body.
 * (`openapi.redis.test.ts` drives every listed status, store outages too.)
 */
import { decodeJwt, importJWK, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorBody } from '../../src/api/schemas/error.js';
import type { Operation } from '../../src/api/schemas/operation.js';
import { OPERATIONS } from '../../src/api/schemas/operations.js';
import { Tenant } from '../../src/api/schemas/tenants.js';
import { basic, bearer } from '../support/gateway.js';
import { fixtureSuite } from '../support/fixture-suite.js';
import { ALICE, BOB, tokenFor } from '../support/identity-fixture.js';
import { makeClient } from '../support/machine-client.js';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.js';
import { makeTestCa, startTestIdp, type TestCa, type TestIdp } from '../support/oidc-idp.js';
import {
  documentedCall,
  documentErrors,
  type DocumentedRequest,
} from '../support/openapi-answers.js';
import { verifyDomains } from '../support/verified-domains.js';
import { SESSIONS, hiddenField } from '../support/sign-in-page.js';
import {
  PASSKEY_CONFIG,
  passkeyChallenge,
  registerSoftPasskey,
  sessionOf,
} from '../support/passkey-requests.js';
import {
  assertPasskey,
  createPasskey,
  type CreationOptions,
} from '../support/soft-authenticator.js';
import { followLink, mailedConfig } from '../support/account-mail.js';
import { startMailInbox, type MailInbox } from '../support/mail-inbox.js';
import { codeAt, totpConfig } from '../support/totp.js';

const APP = 'https://app.example.test/signed-in';
const IDP_CLIENT = { clientId: 'gateway-acme', clientSecret: 'acme-secret-0123456789abcdef' };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

let dns: TestDnsServer;
let ca: TestCa;
let idp: TestIdp;
let inbox: MailInbox;
/** `operationId status` of every answer seen. */
const seen = new Set<string>();

beforeAll(async () => {
  inbox = await startMailInbox();
  dns = await startDnsServer();
  ca = makeTestCa();
  idp = await startTestIdp({
    ca,
    alg: 'ES256',
    clients: [IDP_CLIENT],
    accounts: { ann: { email: 'ann@acme.test', emailVerified: true } },
  });
}, 60_000);
afterAll(async () => {
  await idp?.close();
  ca?.close();
  await dns?.stop();
  await inbox?.close();
});
const s = fixtureSuite({}, () => ({
  // The test IdP is on loopback.
  sso: {
    enabled: true,
    ca: ca.caFile,
    redirectUris: [APP],
    allowPrivateIssuers: true,
    dnsServers: [dns.address],
  },
  routes: [{ prefix: '/orders', tenant: { path: '/orders/:tenant_id' } }],
  tokens: { refresh: { enabled: true } },
  sessions: SESSIONS,
  mfa: totpConfig(),
}));
// Issue 45: e-mail verification (on with mail) and password reset, which need `publicUrl`
// (with it the metadata is never refused for a bad Host: hence a gateway of their own).
const mailed = fixtureSuite({}, () => ({ ...mailedConfig(inbox), sessions: SESSIONS }));
beforeAll(async () => {
  await verifyDomains(s.gw.gateway.store, 'acme', ['acme.test']);
});

/** The declared operation `operationId` names. */
function declared(operationId: string): Operation {
  const operation = OPERATIONS.find((op) => op.operationId === operationId);
  if (operation === undefined) throw new Error(`${operationId} is not declared`);
  return operation;
}

/** The body must parse with what the operation declares for `status`. */
function expectDeclared(operationId: string, status: number, body: unknown): void {
  const operation = declared(operationId);
  const refused = operation.refusals[status];
  const schema = refused === undefined ? operation.answers[status]?.schema : ErrorBody;
  const where = `${operationId} ${status}`;
  if (schema === undefined)
    return expect(body, `${where}: declared without a body`).toBe(undefined);
  const parsed = schema.safeParse(body);
  expect(parsed.success ? [] : parsed.error.issues, where).toEqual([]);
  if (refused !== undefined)
    expect(refused.codes, where).toContain((body as { error: string }).error);
}

/** Passkeys (issue 45) on a gateway of their own: they need `publicUrl`, which would change the others' answers. */
const p = fixtureSuite({}, () => PASSKEY_CONFIG);

/** Sends the request, then holds the answer against the document and the declaration. */
function call(method: string, target: string, init: DocumentedRequest = {}, base = s.gw.url) {
  return callAt(base, method, target, init);
}

/** {@link call} of the gateway at `base`. */
async function callAt(base: string, method: string, target: string, init: DocumentedRequest = {}) {
  const answer = await documentedCall(base, method, target, init);
  expectDeclared(answer.operationId, answer.status, answer.body);
  seen.add(`${answer.operationId} ${answer.status}`);
  return answer as typeof answer & { body: Record<string, string> };
}

const auth = (who: { email: string; password: string }) => ({
  authorization: basic(who.email, who.password),
});
const asBearer = (token: string) => ({ authorization: bearer(token) });
const form = (fields: Record<string, string>): DocumentedRequest => ({
  headers: FORM,
  body: new URLSearchParams(fields).toString(),
});

describe('real answers hold to the document and the declarations', () => {
  it('users, tokens and tenants', async () => {
    await call('GET', '/1/users/current/tenants', { headers: auth(ALICE) });
    await call('GET', '/1/users/current/tenants', { headers: auth({ ...ALICE, password: 'x' }) });
    const login = await call('GET', '/1/token?tenant_id=acme', { headers: auth(ALICE) });
    await call('GET', '/1/token', { headers: auth(ALICE) });
    await call('GET', '/1/oauth/token?tenant_id=acme', { headers: auth(ALICE) });
    await call('GET', '/1/oauth/token?tenant_id=globex', { headers: auth(ALICE) });
    const token = login.body.access_token as string;
    await call('GET', '/1/tenants/current', { headers: asBearer(token) });
    await call('GET', '/1/tenants/globex', { headers: asBearer(token) });
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      const uri = { 'x-original-uri': '/orders/acme/1' };
      await call(method, '/auth/verify', { headers: { ...asBearer(token), ...uri } });
      await call(method, '/auth/verify', { headers: uri });
    }
    await call('DELETE', '/1/token', { headers: asBearer(token) });
    await call('DELETE', '/1/token', { headers: asBearer(token) });

    const carol = { email: 'carol@example.com', password: 'carol-password-1' };
    const signed = await call('POST', '/1/users', { body: JSON.stringify(carol) });
    await call('POST', '/1/users', { body: JSON.stringify(carol) });
    const password = JSON.stringify({ password: 'carol-password-2' });
    await call('PUT', `/1/users/${signed.body.user_id}/password`, {
      headers: auth(carol),
      body: password,
    });
    await call('PUT', '/1/users/someone-else/password', { headers: auth(ALICE), body: password });
  });

  it('the OAuth endpoints: every grant answered, refusals', async () => {
    const machine = await makeClient(s.gw.gateway.store, 'acme', []);
    const credentials = {
      grant_type: 'client_credentials',
      client_id: machine.clientId,
      client_secret: machine.clientSecret,
    };
    await call('POST', '/1/oauth/token', form(credentials));
    await call('POST', '/1/oauth/token', form({ ...credentials, client_secret: 'tgs_wrong' }));
    await call('POST', '/1/oauth/token', form({ grant_type: 'password' }));
    const { refresh_token: refreshToken } = await tokenFor(s.gw.url, ALICE, 'acme');
    const refreshed = await call(
      'POST',
      '/1/oauth/token',
      form({ grant_type: 'refresh_token', refresh_token: refreshToken as string }),
    );
    await call('POST', '/1/oauth/revoke', form({ token: refreshed.body.refresh_token as string }));
    await call('POST', '/1/oauth/revoke', form({}));
  });

  it("a user's own sessions", async () => {
    const mine = await tokenFor(s.gw.url, ALICE, 'acme');
    const other = await tokenFor(s.gw.url, ALICE, 'acme');
    const listed = await call('GET', '/1/sessions', { headers: asBearer(mine.access_token) });
    expect(listed.body.sessions).toEqual(
      expect.arrayContaining([expect.objectContaining({ current: true })]),
    );
    await call('GET', '/1/sessions', { headers: asBearer('not-a-token') });
    const fid = decodeJwt(other.access_token).fid as string;
    await call('DELETE', `/1/sessions/${fid}`, { headers: asBearer(mine.access_token) });
    await call('DELETE', `/1/sessions/${fid}`, { headers: asBearer(mine.access_token) });
  });

  it("a user's own TOTP factor", async () => {
    const who = { email: 'tia@example.com', password: 'tia-password-1' };
    await call('POST', '/1/users', { body: JSON.stringify(who) });
    const headers = auth(who);
    const begun = await call('POST', '/1/users/current/mfa/totp', { headers });
    await call('POST', '/1/users/current/mfa/totp', { headers: auth({ ...who, password: 'x' }) });
    const confirm = (code: string) =>
      call('POST', '/1/users/current/mfa/totp/confirm', {
        headers,
        body: JSON.stringify({ code }),
      });
    await confirm('000000');
    const confirmed = await confirm(await codeAt(begun.body.secret as string));
    const codes = (confirmed.body as unknown as { recovery_codes: string[] }).recovery_codes;
    await call('DELETE', '/1/users/current/mfa/totp', { headers });
    await call('DELETE', '/1/users/current/mfa/totp', {
      headers: { ...headers, 'x-otp': codes[0] as string },
    });
  });

  it("a tenant's machine clients and keys", async () => {
    const admin = asBearer((await tokenFor(s.gw.url, ALICE, 'acme')).access_token);
    const member = asBearer((await tokenFor(s.gw.url, BOB, 'acme')).access_token);
    const clients = '/1/tenants/acme/clients';
    const created = await call('POST', clients, {
      headers: admin,
      body: JSON.stringify({ name: 'ci', scopes: [] }),
    });
    await call('POST', clients, { headers: admin, body: '{"name": ' });
    await call('GET', clients, { headers: admin });
    await call('GET', clients, { headers: member });
    const one = `${clients}/${created.body.client_id}`;
    const none = `${clients}/tgc_aaaaaaaaaaaaaaaaaaaaaaaaaa`;
    for (const [method, suffix] of [
      ['GET', ''],
      ['POST', '/secret'],
      ['GET', '/keys'],
    ] as const) {
      await call(method, `${one}${suffix}`, { headers: admin });
      await call(method, `${none}${suffix}`, { headers: admin });
    }
    const key = await call('POST', `${one}/keys`, { headers: admin, body: '{}' });
    await call('POST', `${one}/keys`, { headers: admin, body: '{"expires_at": 1}' });
    await call('DELETE', `${one}/keys/${key.body.key_id}`, { headers: admin });
    await call('DELETE', `${one}/keys/${key.body.key_id}`, { headers: admin });
    await call('DELETE', one, { headers: admin });
    await call('DELETE', one, { headers: admin });
  });

  it("a tenant's e-mail domains", async () => {
    const admin = asBearer((await tokenFor(s.gw.url, ALICE, 'acme')).access_token);
    const member = asBearer((await tokenFor(s.gw.url, BOB, 'acme')).access_token);
    const domains = '/1/tenants/acme/domains';
    const claim = (domain: string) => JSON.stringify({ domain });
    const claimed = await call('POST', domains, { headers: admin, body: claim('docs.example') });
    await call('POST', domains, { headers: admin, body: claim('not a domain') });
    await call('GET', domains, { headers: admin });
    await call('GET', domains, { headers: member });
    dns.setTxt(claimed.body.txt_name as string, [claimed.body.txt_value as string]);
    await call('POST', `${domains}/docs.example/verify`, { headers: admin });
    await call('POST', `${domains}/nothing.example/verify`, { headers: admin });
    await call('DELETE', `${domains}/docs.example`, { headers: admin });
    await call('DELETE', `${domains}/not_a_domain!`, { headers: admin });
  });

  it("a tenant's identity provider, the browser sign-in and the token exchange", async () => {
    const admin = asBearer((await tokenFor(s.gw.url, ALICE, 'acme')).access_token);
    const member = asBearer((await tokenFor(s.gw.url, BOB, 'acme')).access_token);
    const settings = (issuer: string) =>
      JSON.stringify({ issuer, client_id: IDP_CLIENT.clientId, domains: ['acme.test'] });
    const path = '/1/tenants/acme/idp';
    await call('PUT', path, { headers: admin, body: settings(idp.issuer) });
    await call('PUT', path, { headers: admin, body: settings('http://idp.acme.test') });
    await call('GET', path, { headers: admin });
    await call('GET', path, { headers: member });

    const pkce = `code_challenge=${'a'.repeat(43)}&code_challenge_method=S256`;
    const started = await call(
      'GET',
      `/1/tenants/acme/sso/login?redirect_uri=${encodeURIComponent(APP)}&${pkce}`,
    );
    await call('GET', '/1/tenants/acme/sso/login?redirect_uri=https://evil.example/');
    const state = new URL(started.headers.get('location') as string).searchParams.get('state');
    const cookie = (started.headers.get('set-cookie') as string).split(';')[0] as string;
    await call('GET', `/1/sso/callback?state=${state as string}&error=access_denied`, {
      headers: { cookie },
    });
    await call('GET', '/1/sso/callback?state=unknown&code=x');

    // Issue 44: the company sign-in into a session, its callback, the IdP's back-channel logout.
    const company = await call('GET', '/1/sign-in/sso?tenant_id=acme&return_to=/orders');
    const sessionState = new URL(company.headers.get('location') as string).searchParams.get(
      'state',
    );
    await call('GET', `/1/sso/callback?state=${sessionState as string}&error=access_denied`, {
      headers: { cookie: (company.headers.get('set-cookie') as string).split(';')[0] as string },
    });
    await call('GET', '/1/sign-in/sso?email=someone@nowhere.test');
    await call('GET', '/1/sign-in/sso?email=a@acme.test&email=b@acme.test');
    const now = Math.floor(Date.now() / 1000);
    const logoutToken = await new SignJWT({
      events: { 'http://schemas.openid.net/event/backchannel-logout': {} },
      sub: 'nobody-here',
      jti: `jti-${now}`,
    })
      .setProtectedHeader({ alg: 'ES256', kid: idp.keys[0]?.kid as string })
      .setIssuer(idp.issuer)
      .setAudience(IDP_CLIENT.clientId)
      .setIssuedAt(now)
      .sign(await importJWK(idp.keys[0] as JWK, 'ES256'));
    await call('POST', '/1/sso/backchannel-logout', form({ logout_token: logoutToken }));
    await call('POST', '/1/sso/backchannel-logout', form({ logout_token: 'not.a.token' }));

    const exchange = {
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: await idp.idToken('ann', IDP_CLIENT),
      subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
      tenant_id: 'acme',
    };
    await call('POST', '/1/oauth/token', form(exchange));
    await call('POST', '/1/oauth/token', form({ ...exchange, subject_token: 'not.a.token' }));

    await call('DELETE', path, { headers: admin });
    await call('DELETE', path, { headers: admin });
  });

  it('the sign-in page and the sign-out', async () => {
    const page = await call('GET', '/1/sign-in?return_to=%2Fapp');
    await call('GET', '/1/sign-in?return_to=%2Fa&return_to=%2Fb');
    const cookie = (page.headers.get('set-cookie') as string).split(';')[0] as string;
    const token = hiddenField(page.body as unknown as string, 'csrf_token') as string;
    const post = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
      call('POST', '/1/sign-in', {
        headers: { ...FORM, cookie, 'sec-fetch-site': 'same-origin', ...headers },
        body: new URLSearchParams({ csrf_token: token, ...fields }).toString(),
      });
    const signedIn = await post({ ...BOB, tenant_id: 'acme' });
    await post({ ...BOB, password: 'not-the-password' });
    const session = (signedIn.headers.get('set-cookie') as string).split(';')[0] as string;
    await call('POST', '/1/sign-out', {
      headers: { ...FORM, cookie: session, 'sec-fetch-site': 'same-origin' },
      body: 'return_to=%2Fbye',
    });
    await call('POST', '/1/sign-out', { headers: { ...FORM, 'sec-fetch-site': 'cross-site' } });
  });

  it("a user's passkeys, and the sign-in page's passkey options and step", async () => {
    const base = p.gw.url;
    const session = await sessionOf(base, ALICE, 'acme');
    const same = { cookie: session, 'sec-fetch-site': 'same-origin' };
    const passkeys = '/1/users/current/passkeys';
    const created = await call('POST', `${passkeys}/options`, { headers: same }, base);
    await call('POST', `${passkeys}/options`, {}, base);
    const origin = p.fx.config.publicUrl as string;
    const { response } = createPasskey(created.body as unknown as CreationOptions, origin);
    const registered = await call(
      'POST',
      passkeys,
      { headers: same, body: JSON.stringify({ response }) },
      base,
    );
    const id = registered.body.passkey_id as string;
    await call('POST', passkeys, { headers: same, body: '{"response": {}}' }, base);
    await call('GET', passkeys, { headers: same }, base);
    await call('GET', '/1/users/someone-else/passkeys', { headers: same }, base);
    await call('DELETE', `${passkeys}/${id}`, { headers: same }, base);
    await call('DELETE', `${passkeys}/${id}`, { headers: same }, base);

    const page = await call('GET', '/1/sign-in?return_to=%2Fapp', {}, base);
    const cookie = (page.headers.get('set-cookie') as string).split(';')[0] as string;
    const token = hiddenField(page.body as unknown as string, 'csrf_token') as string;
    const options = await call(
      'POST',
      '/1/sign-in/passkey/options',
      {
        headers: { ...FORM, cookie, 'sec-fetch-site': 'same-origin' },
        body: `csrf_token=${token}`,
      },
      base,
    );
    expect(options.body.challenge).toBeTruthy();
    await call('POST', '/1/sign-in/passkey/options', { ...form({ csrf_token: token }) }, base);
    const { passkey } = await registerSoftPasskey(base, session);
    const ceremony = await passkeyChallenge(base);
    const credential = assertPasskey(passkey, ceremony.challenge, origin);
    const fields = {
      csrf_token: ceremony.token,
      step: 'passkey',
      tenant_id: 'acme',
      credential: JSON.stringify(credential),
    };
    const post = (body: Record<string, string>) =>
      call(
        'POST',
        '/1/sign-in',
        {
          headers: { ...FORM, cookie: ceremony.preSession, 'sec-fetch-site': 'same-origin' },
          body: new URLSearchParams(body).toString(),
        },
        base,
      );
    expect((await post(fields)).status).toBe(303);
    expect((await post(fields)).status).toBe(401);
  });

  it('the e-mail verification and the password reset (issue 45)', async () => {
    const on = (method: string, target: string, init: DocumentedRequest = {}) =>
      callAt(mailed.gw.url, method, target, init);
    const dave = { email: 'dave@example.com', password: 'dave-password-1' };
    await on('POST', '/1/users', { body: JSON.stringify(dave) });
    const mail = await inbox.next(dave.email);
    const verify = new URL(followLink(mail, '/1/email-verifications', mailed.gw.url)).pathname;
    await on('GET', verify);
    await on('POST', verify);
    await on('POST', verify);
    await on('GET', verify);

    await on('GET', '/1/password-resets');
    const ask = (email: string) =>
      on('POST', '/1/password-resets', { body: JSON.stringify({ email }) });
    await ask(dave.email);
    await ask('not an address');
    const link = new URL(
      followLink(await inbox.next(dave.email), '/1/password-resets', mailed.gw.url),
    ).pathname;
    await on('GET', link);
    await on('POST', link, { body: JSON.stringify({ password: 'short' }) });
    await on('POST', link, { body: JSON.stringify({ password: 'dave-password-2' }) });
    await on('POST', link, { body: JSON.stringify({ password: 'dave-password-3' }) });
    await on('GET', link);
  });

  it("a tenant's members and invitations", async () => {
    const at = (method: string, target: string, init: DocumentedRequest = {}) =>
      callAt(mailed.gw.url, method, target, init);
    const store = mailed.gw.gateway.store;
    const admin = asBearer((await tokenFor(mailed.gw.url, ALICE, 'acme')).access_token);
    const member = asBearer((await tokenFor(mailed.gw.url, BOB, 'acme')).access_token);
    const bob = (await store.users.findUserByEmail(BOB.email))?.id as string;
    const members = '/1/tenants/acme/members';
    await at('GET', members, { headers: admin });
    await at('GET', members, { headers: member });
    const role = (value: string) => JSON.stringify({ role: value });
    await at('PUT', `${members}/${bob}`, { headers: admin, body: role('member') });
    await at('PUT', `${members}/nobody`, { headers: admin, body: role('member') });
    await at('DELETE', `${members}/nobody`, { headers: admin });

    const invitations = '/1/tenants/acme/invitations';
    const invite = (email: string) => JSON.stringify({ email, role: 'member' });
    const made = await at('POST', invitations, { headers: admin, body: invite('ivy@example.com') });
    await at('POST', invitations, { headers: admin, body: invite('not an address') });
    await at('GET', invitations, { headers: admin });
    await at('GET', invitations, { headers: member });
    await at('DELETE', `${invitations}/${made.body.invitation_id}`, { headers: admin });
    await at('DELETE', `${invitations}/${made.body.invitation_id}`, { headers: admin });

    const linkOf = async (email: string) => {
      await at('POST', invitations, { headers: admin, body: invite(email) });
      return new URL((await inbox.next(email)).links[0] as string).pathname;
    };
    const html = { accept: 'text/html' };
    const page = await linkOf('jo@example.com');
    await at('GET', page, { headers: html });
    // A refusal in JSON (a browser asking for HTML gets the page saying it).
    await at('GET', '/1/invitations/unknown');
    const signUp = new URLSearchParams({ action: 'sign-up', password: 'jo-password-1' });
    const post = { headers: { ...FORM, ...html, 'sec-fetch-site': 'same-origin' } };
    await at('POST', page, { ...post, body: signUp.toString() });
    await at('POST', page, { headers: FORM, body: signUp.toString() });

    await store.users.markEmailVerified(bob, 1_700_000_000);
    await at('DELETE', `${members}/${bob}`, { headers: admin });
    const link = await linkOf(BOB.email);
    await at('POST', `${link}/accept`, { headers: auth(ALICE) });
    await at('POST', `${link}/accept`, { headers: auth(BOB) });
  });

  it("the console's own calls: who I am, the tenant switch, a tenant's audit", async () => {
    const page = await call('GET', '/1/sign-in?return_to=%2Fconsole%2F');
    const cookie = (page.headers.get('set-cookie') as string).split(';')[0] as string;
    const token = hiddenField(page.body as unknown as string, 'csrf_token') as string;
    const signedIn = await call('POST', '/1/sign-in', {
      headers: { ...FORM, cookie, 'sec-fetch-site': 'same-origin' },
      body: new URLSearchParams({ csrf_token: token, ...BOB, tenant_id: 'acme' }).toString(),
    });
    const session = (signedIn.headers.get('set-cookie') as string).split(';')[0] as string;
    const same = { cookie: session, 'sec-fetch-site': 'same-origin' };
    await call('GET', '/1/users/current', { headers: same });
    await call('GET', '/1/users/current', {});
    await call('POST', '/1/sessions', { headers: same, body: '{"tenant_id": "globex"}' });
    await call('POST', '/1/sessions', { headers: same, body: '{}' });
    const admin = asBearer((await tokenFor(s.gw.url, ALICE, 'acme')).access_token);
    await call('GET', '/1/tenants/acme/audit?limit=5', { headers: admin });
    await call('GET', '/1/tenants/acme/audit?limit=0', { headers: admin });
  });

  it('the well-known documents', async () => {
    await call('GET', '/.well-known/jwks.json');
    await call('GET', '/.well-known/openapi.json');
    await call('GET', '/.well-known/oauth-authorization-server');
    await call('GET', '/.well-known/oauth-authorization-server', { host: 'a.example/x?y=' });
  });

  it('answered every operation as it does when all goes well, and refused', () => {
    const missing = OPERATIONS.flatMap((op) => {
      const statuses = [...seen].filter((s) => s.startsWith(`${op.operationId} `));
      const ok = statuses.some((s) => /\s[23]\d\d$/.test(s));
      const refused =
        Object.keys(op.refusals).length === 0 || statuses.some((s) => / 4\d\d$/.test(s));
      return ok && refused ? [] : [`${op.operationId}: ${statuses.join(', ') || 'never called'}`];
    });
    expect(missing).toEqual([]);
  });
});

describe('a drifted answer', () => {
  it('fails against the document and the declaration alike', async () => {
    const token = (await tokenFor(s.gw.url, ALICE, 'acme')).access_token;
    const res = await fetch(`${s.gw.url}/1/tenants/current`, { headers: asBearer(token) });
    const real = (await res.json()) as Record<string, unknown>;
    const { name: _, ...missing } = real;
    for (const drifted of [{ ...real, extra: 1 }, missing, { ...real, created_at: '0' }]) {
      expect(
        documentErrors('GET', '/1/tenants/current', 200, 'application/json', drifted),
      ).not.toEqual([]);
      expect(Tenant.safeParse(drifted).success).toBe(false);
    }
    expect(documentErrors('GET', '/1/tenants/current', 200, 'application/json', real)).toEqual([]);
  });
});
