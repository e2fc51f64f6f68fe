/**
 * A tenant's identity on a store two gateways share: what a tenant admin or
 * a tenant's identity provider changes through one instance, the other sees
 * at once — machine clients, the IdP record, users an IdP creates or links —
 * and the store holds no secret in clear. One redis-server and one test CA
 * for the file; each block starts its gateways on the server under a key
 * prefix of its own, and its own HTTPS OIDC provider where it needs one.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretSealer } from '../../src/auth/federation/sealed-secrets.js';
import { secretDigest } from '../../src/auth/clients/secrets.js';
import { tenantStream } from '../../src/store/audit-log.js';
import { expectError } from '../support/expect-error.js';
import { basic, bearer, type TestGateway } from '../support/gateway.js';
import { ALICE, BOB, tokenFor } from '../support/identity-fixture.js';
import { startRedisServer, type TestRedisServer } from '../support/redis-server.js';
import { callback, redeemCode, throughIdp } from '../support/sso-sign-in.js';
import { ACME_CLIENT, exchangeAt, storeTenantIdp } from '../support/token-exchange.js';
import { useTwoInstances, type TwoInstances } from '../support/two-instances.js';
import { verifyDomains } from '../support/verified-domains.js';
import { signUp } from '../support/account-requests.js';
import { loopbackSso, useTestIdps } from '../support/test-idps.js';

let server: TestRedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(() => server?.stop());
/** The providers of the blocks below: one each, on one test CA. */
const idps = useTestIdps({
  exchanging: { alg: 'ES256', clients: [ACME_CLIENT], accounts: { dana: 'dana@acme.test' } },
  signingIn: { alg: 'ES256', clients: [ACME_CLIENT], accounts: { ann: 'ann@acme.test' } },
  linking: {
    alg: 'RS256',
    clients: [ACME_CLIENT],
    accounts: { boss: 'boss@acme-late.test' },
  },
});
/** The key sealing IdP client secrets at rest (`sso.secretsKeyFile`). */
const SSO_KEY = randomBytes(32);
let ssoKeyFile: string;
let ssoKeyDir: string;
beforeAll(() => {
  ssoKeyDir = mkdtempSync(join(tmpdir(), 'tg-sso-redis-'));
  ssoKeyFile = join(ssoKeyDir, 'sso.key');
  writeFileSync(ssoKeyFile, `${SSO_KEY.toString('base64')}\n`);
});
afterAll(() => rmSync(ssoKeyDir, { recursive: true, force: true }));

/** `key value` of everything the block's store holds in Redis (under its prefix). */
async function storedValues(t: TwoInstances): Promise<string[]> {
  const prefix = (t.fx.config.store as { redis: { keyPrefix: string } }).redis.keyPrefix;
  const values: string[] = [];
  for (const key of await t.redis.keys(`${prefix}*`)) {
    const type = await t.redis.type(key);
    const value =
      type === 'hash'
        ? JSON.stringify(await t.redis.hgetall(key))
        : type === 'set'
          ? JSON.stringify(await t.redis.smembers(key))
          : type === 'stream'
            ? JSON.stringify(await t.redis.xrange(key, '-', '+'))
            : type === 'string'
              ? await t.redis.get(key)
              : '';
    values.push(`${key} ${value}`);
  }
  return values;
}

/**
 * The tenant admins' machine-client endpoints on a shared redis-server with
 * two gateway instances: what one instance creates, rotates or removes the
 * other sees at once; Redis holds the secrets' digests only; each change is
 * in the tenant's audit stream as the acting admin, never with a secret.
 */
describe("a tenant's machine clients", () => {
  const t = useTwoInstances(
    () => server,
    // An admin gives a client at most their role's scopes.
    () => ({ authorization: { roles: { admin: ['catalog:read'] } } }),
  );
  let token: string;
  beforeAll(async () => {
    token = (await tokenFor(t.fx.gw.url, ALICE, 'acme')).access_token;
  });

  async function call(gw: TestGateway, method: string, path: string, body?: unknown) {
    const res = await fetch(`${gw.url}${path}`, {
      method,
      headers: {
        authorization: bearer(token),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return { status: res.status, body: (text === '' ? undefined : JSON.parse(text)) as any };
  }

  describe('machine clients on a shared store', () => {
    it('one instance writes, the other reads; Redis keeps digests; the audit names the admin', async () => {
      const created = await call(t.fx.gw, 'POST', '/1/tenants/acme/clients', {
        name: 'ci',
        scopes: ['catalog:read'],
      });
      expect(created.status).toBe(201);
      const { client_id, client_secret } = created.body;
      const seen = await call(t.b, 'GET', `/1/tenants/acme/clients/${client_id}`);
      expect([seen.status, seen.body.name]).toEqual([200, 'ci']);

      const rotated = await call(t.b, 'POST', `/1/tenants/acme/clients/${client_id}/secret`);
      expect(rotated.status).toBe(200);
      const key = await call(t.fx.gw, 'POST', `/1/tenants/acme/clients/${client_id}/keys`);
      expect(key.status).toBe(201);
      const listed = await call(t.b, 'GET', `/1/tenants/acme/clients/${client_id}/keys`);
      expect(listed.body.keys.map((k: { key_id: string }) => k.key_id)).toEqual([key.body.key_id]);

      // Everything Redis holds under the fixture's prefix: digests, never a secret.
      const text = (await storedValues(t)).join('\n');
      expect(text).toContain(secretDigest(rotated.body.client_secret));
      expect(text).toContain(secretDigest(key.body.api_key));
      for (const secret of [client_secret, rotated.body.client_secret, key.body.api_key])
        expect(text).not.toContain(secret);

      expect((await call(t.b, 'DELETE', `/1/tenants/acme/clients/${client_id}`)).status).toBe(204);
      expect((await call(t.fx.gw, 'GET', `/1/tenants/acme/clients/${client_id}`)).status).toBe(404);
      expect(await t.fx.gw.gateway.store.apiKeys.getApiKey(key.body.key_id)).toBeNull();

      const entries = await t.fx.gw.gateway.store
        .auditLog({ maxEventsPerStream: 1000 })
        .read(tenantStream('acme'), 0);
      const events = entries
        .map((e) => JSON.parse(e.event) as Record<string, unknown>)
        .filter((e) => e.client_id === client_id);
      expect(events.map((e) => e.event)).toEqual([
        'client_created',
        'client_secret_rotated',
        'api_key_created',
        'client_removed',
      ]);
      for (const e of events) expect(e).toMatchObject({ source: 'api', actor: ALICE.email });
      expect(events.at(-1)).toMatchObject({ key_ids: [key.body.key_id] });
    });
  });
});

/**
 * A tenant's identity provider on Redis (issue 34): two gateways sharing one
 * store see the same record at once; two tenants racing for one issuer never
 * both get it (one script writes a record and its issuer together); no Redis
 * value holds the client secret.
 */
describe("a tenant's IdP record", () => {
  const SECRET = `idp-secret-${randomBytes(12).toString('hex')}`;

  const t = useTwoInstances(
    () => server,
    () => ({ sso: { secretsKeyFile: ssoKeyFile } }),
  );
  let aliceAcme: string;
  let bobGlobex: string;
  beforeAll(async () => {
    await verifyDomains(t.fx.gw.gateway.store, 'acme', ['acme.example']);
    await verifyDomains(t.fx.gw.gateway.store, 'globex', ['globex.example']);
    aliceAcme = (await tokenFor(t.fx.gw.url, ALICE, 'acme')).access_token;
    bobGlobex = (await tokenFor(t.fx.gw.url, BOB, 'globex')).access_token;
  });

  async function put(gw: TestGateway, tenant: string, token: string, body: unknown) {
    const res = await fetch(`${gw.url}/1/tenants/${tenant}/idp`, {
      method: 'PUT',
      headers: { authorization: bearer(token), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, text: await res.text() };
  }

  async function get(gw: TestGateway, tenant: string, token: string) {
    const res = await fetch(`${gw.url}/1/tenants/${tenant}/idp`, {
      headers: { authorization: bearer(token) },
    });
    return { status: res.status, text: await res.text() };
  }

  it('one instance sets it, the other reads it and removes it, the first sees it gone', async () => {
    const idp = {
      issuer: 'https://login.acme.example',
      client_id: 'gw',
      client_secret: SECRET,
      domains: ['acme.example'],
    };
    expect((await put(t.fx.gw, 'acme', aliceAcme, idp)).status).toBe(201);
    const read = await get(t.b, 'acme', aliceAcme);
    expect(read.status).toBe(200);
    expect(JSON.parse(read.text)).toMatchObject({
      issuer: 'https://login.acme.example',
      client_secret_set: true,
    });
    expect(read.text).not.toContain(SECRET);

    for (const entry of await storedValues(t)) expect(entry).not.toContain(SECRET);

    const removed = await fetch(`${t.b.url}/1/tenants/acme/idp`, {
      method: 'DELETE',
      headers: { authorization: bearer(aliceAcme) },
    });
    expect(removed.status).toBe(204);
    expect((await get(t.fx.gw, 'acme', aliceAcme)).status).toBe(404);
  });

  it('two tenants racing for one issuer and client id through two instances: exactly one gets it', async () => {
    for (let round = 0; round < 5; round++) {
      const issuer = `https://shared-${round}.example`;
      const body = { issuer, client_id: 'gw' };
      const answers = await Promise.all([
        put(t.fx.gw, 'acme', aliceAcme, { ...body, domains: ['acme.example'] }),
        put(t.b, 'globex', bobGlobex, { ...body, domains: ['globex.example'] }),
      ]);
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses.filter((s) => s === 409)).toHaveLength(1);
      expect(statuses.filter((s) => s === 200 || s === 201)).toHaveLength(1);
      const holders = await Promise.all([
        get(t.fx.gw, 'acme', aliceAcme),
        get(t.b, 'globex', bobGlobex),
      ]);
      expect(holders.filter((h) => h.status === 200 && h.text.includes(issuer))).toHaveLength(1);
      expect(await t.fx.gw.gateway.store.idps.tenantIdByClient(issuer, 'gw')).toMatch(
        /^(acme|globex)$/,
      );
    }
  });
});

/**
 * The token exchange on two instances sharing a Redis store: a user the
 * first creates at their first sign-in (no password, marked as the IdP's) is
 * read back from Redis by the t.b, which signs them in; removing the
 * membership on one ends the exchanged token on both, and the IdP's mark lets
 * the user join again at their next sign-in.
 */
describe('a user an IdP creates', () => {
  // The IdP is on loopback.
  const t = useTwoInstances(
    () => server,
    () => ({ sso: loopbackSso(idps.ca) }),
  );
  beforeAll(() =>
    storeTenantIdp(t.fx.gw.gateway.store, {
      tenantId: 'acme',
      issuer: idps.exchanging.issuer,
      clientId: ACME_CLIENT.clientId,
      domains: ['acme.test'],
    }),
  );

  const exchange = (gw: TestGateway, subjectToken: string) =>
    exchangeAt(gw.url, subjectToken, 'acme');

  const tenantStatus = async (gw: TestGateway, token: string) =>
    (await fetch(`${gw.url}/1/tenants/acme`, { headers: { authorization: bearer(token) } })).status;

  describe('token exchange on a shared Redis store', () => {
    it('creates the user on one instance, signs them in on the other, and ends them on both', async () => {
      const first = await exchange(t.fx.gw, await idps.exchanging.idToken('dana'));
      expect(first.status).toBe(200);
      const store = t.b.gateway.store;
      const user = await store.users.findUserByEmail('dana@acme.test');
      expect(user?.createdByIdp).toEqual({ tenantId: 'acme', issuer: idps.exchanging.issuer });
      expect(user?.passwordHash).toBe('*');

      const res = await exchange(t.b, await idps.exchanging.idToken('dana'));
      expect(res.status).toBe(200);
      const { access_token: token } = (await res.json()) as { access_token: string };
      expect(await tenantStatus(t.fx.gw, token)).toBe(200);

      expect(await store.memberships.removeMember('acme', user?.id as string)).toBe(true);
      expect(await tenantStatus(t.fx.gw, token)).toBe(401);
      expect(await tenantStatus(t.b, token)).toBe(401);

      // The IdP created them: its next sign-in joins them again (a new membership, a new token).
      const again = await exchange(t.fx.gw, await idps.exchanging.idToken('dana'));
      expect(again.status).toBe(200);
      const renewed = ((await again.json()) as { access_token: string }).access_token;
      expect(await tenantStatus(t.b, renewed)).toBe(200);
    });
  });
});

/**
 * The browser sign-in on the Redis store, across two gateways sharing it: a
 * sign-in started at one instance finishes at the t.b, and its one-time
 * records are taken once whatever the race (GETDEL) — a callback replayed
 * and a code redeemed at both instances at once give one success each.
 */
describe('a browser sign-in', () => {
  const APP = 'https://app.example.test/signed-in';

  let agent: Agent;
  beforeAll(() => {
    agent = new Agent({ connect: { ca: idps.ca.ca } });
  });
  afterAll(() => agent?.close());
  const t = useTwoInstances(
    () => server,
    () => ({
      // The IdP is on loopback.
      sso: loopbackSso(idps.ca, { secretsKeyFile: ssoKeyFile, redirectUris: [APP] }),
    }),
  );
  beforeAll(async () => {
    // Both instances' callbacks: a sign-in goes back to the one the browser addressed.
    idps.signingIn.allowRedirectUri(`${t.fx.gw.url}/1/sso/callback`);
    await storeTenantIdp(t.fx.gw.gateway.store, {
      tenantId: 'acme',
      issuer: idps.signingIn.issuer,
      clientId: ACME_CLIENT.clientId,
      clientSecretSealed: createSecretSealer(SSO_KEY).seal(ACME_CLIENT.clientSecret, 'acme'),
      domains: ['acme.test'],
    });
  });

  const VERIFIER = randomBytes(32).toString('base64url');
  const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');

  const start = (gw: TestGateway) =>
    `${gw.url}/1/tenants/acme/sso/login?${new URLSearchParams({ redirect_uri: APP, code_challenge: CHALLENGE, code_challenge_method: 'S256' })}`;

  it('takes a callback once and a code once, whichever instance asks, concurrently', async () => {
    const started = await throughIdp({
      gatewayUrl: t.fx.gw.url,
      issuer: idps.signingIn.issuer,
      agent,
      start: start(t.fx.gw),
      account: 'ann',
    });
    // The same callback at both instances at once (the other's URL, the same query).
    const atOther = started.callbackUrl.replace(t.fx.gw.url, t.b.url);
    const answers = await Promise.all([
      callback(started.callbackUrl, started.cookie),
      callback(atOther, started.cookie),
    ]);
    expect(answers.map((r) => r.status).sort()).toEqual([302, 400]);
    const won = answers.find((r) => r.status === 302) as Response;
    const code = new URL(won.headers.get('location') as string).searchParams.get('code') as string;
    const redeemed = await Promise.all(
      [t.fx.gw, t.b].map((gw) =>
        redeemCode(gw.url, { code, redirect_uri: APP, code_verifier: VERIFIER }),
      ),
    );
    expect(redeemed.map((r) => r.status).sort()).toEqual([200, 400]);
  }, 60_000);
});

/**
 * Issue 42: a squatted account linked by its tenant's provider
 * (`link_existing`) loses its password and every token on every instance
 * before the sign-in answers. Two gateways on one private redis-server: the
 * squatter's access and refresh tokens work at B; acme's provider links the
 * address at A; at once B refuses them, and the password opens nothing.
 */
describe('a squatted address an IdP links', () => {
  const SQUATTER = { email: 'boss@acme-late.test', password: 'squatter-password-1' };

  const t = useTwoInstances(
    () => server,
    () => ({
      sso: loopbackSso(idps.ca),
      tokens: { refresh: { enabled: true } },
    }),
  );

  const basicToken = (gw: TestGateway, tenantId: string) =>
    fetch(`${gw.url}/1/token?tenant_id=${encodeURIComponent(tenantId)}`, {
      headers: { authorization: basic(SQUATTER.email, SQUATTER.password) },
    });
  const tenantWith = (gw: TestGateway, token: string) =>
    fetch(`${gw.url}/1/tenants/current`, { headers: { authorization: bearer(token) } });
  const oauthToken = (gw: TestGateway, fields: Record<string, string>) =>
    fetch(`${gw.url}/1/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields),
    });

  it("ends the squatter's password, access and refresh tokens on every instance at the link", async () => {
    // Signed up at A before acme verified the domain.
    const made = await signUp(t.fx.gw.url, SQUATTER);
    expect(made.status).toBe(201);
    const { tenant_id: personal } = (await made.json()) as { tenant_id: string };
    const earlier = await basicToken(t.b, personal);
    expect(earlier.status).toBe(200);
    const tokens = (await earlier.json()) as { access_token: string; refresh_token: string };
    expect((await tenantWith(t.b, tokens.access_token)).status).toBe(200);

    await storeTenantIdp(t.fx.gw.gateway.store, {
      tenantId: 'acme',
      issuer: idps.linking.issuer,
      clientId: ACME_CLIENT.clientId,
      domains: ['acme-late.test'],
      linkExisting: true,
    });
    // Issue 45: only an address its holder proved is linked (this one had followed its link).
    const store = t.fx.gw.gateway.store;
    const squatter = await store.users.findUserByEmail(SQUATTER.email);
    await store.users.markEmailVerified(squatter?.id as string, Math.floor(Date.now() / 1000));
    const linked = await exchangeAt(t.fx.gw.url, await idps.linking.idToken('boss'), 'acme');
    expect(linked.status).toBe(200);

    // B, without waiting: the earlier token, its refresh token and the password are refused.
    await expectError(await tenantWith(t.b, tokens.access_token), 401, 'invalid_token');
    await expectError(
      await oauthToken(t.b, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }),
      400,
      'invalid_grant',
    );
    await expectError(await basicToken(t.b, personal), 401, 'invalid_credentials');
    const { access_token: member } = (await linked.json()) as { access_token: string };
    expect((await tenantWith(t.b, member)).status).toBe(200);
  });
});

/**
 * The members API (issue 45) on two instances of one store: a member an
 * admin removes through one instance is refused by the other at once, before
 * any cache could expire.
 */
describe("a tenant's members, removed through one instance", () => {
  const t = useTwoInstances(
    () => server,
    () => ({}),
  );

  it("the member's token is refused on the other instance at once", async () => {
    const admin = (await tokenFor(t.a.url, ALICE, 'acme')).access_token;
    const member = await tokenFor(t.b.url, BOB, 'acme');
    const onB = () =>
      fetch(`${t.b.url}/1/tenants/current`, {
        headers: { authorization: bearer(member.access_token) },
      });
    expect((await onB()).status).toBe(200);
    const removed = await fetch(`${t.a.url}/1/tenants/acme/members/${member.user_id as string}`, {
      method: 'DELETE',
      headers: { authorization: bearer(admin) },
    });
    expect(removed.status).toBe(204);
    await expectError(await onB(), 401, 'invalid_token');
  });
});
