/**
 * Issue 43: every way of getting a token is recorded alike (`identity/issued.ts`).
 * The suite walks the grant registry (`api/identity/grants.ts`) and the Basic
 * login at `/1/token`, performs each on a running gateway that serves them
 * all (sign-in with acme's provider, refresh tokens), and checks the request
 * counted by its principal kind (never `none`), the token counted by kind,
 * and the grant's audit event naming the token's `jti`. A grant added to the
 * registry without a case here fails. The RFC 8414 metadata lists exactly
 * the registry's grants a gateway enables.
 */
import { createHash, randomBytes } from 'node:crypto';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRANTS } from '../../src/api/identity/grants.js';
import { validateConfig } from '../../src/config/index.js';
import { startAcmeIdp, ACME_IDP_CLIENT, APP, type AcmeIdp } from '../support/acme-idp.js';
import { adminUrlOf, basic } from '../support/gateway.js';
import {
  ALICE,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../support/identity-fixture.js';
import { clientCredentials, makeClient } from '../support/machine-client.js';
import { scrape, total } from '../support/prometheus-text.js';
import { callback, redeemCode, throughIdp } from '../support/sso-sign-in.js';

const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';
const VERIFIER = randomBytes(32).toString('base64url');
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');

let acme: AcmeIdp;
/** Every grant enabled. */
let fx: IdentityFixture;
/** Sign-in and refresh tokens off. */
let plain: IdentityFixture;

beforeAll(async () => {
  acme = await startAcmeIdp({
    ann: { email: 'ann@acme.test', emailVerified: true },
    bea: { email: 'bea@acme.test', emailVerified: true },
  });
  [fx, plain] = await Promise.all([
    startMemoryIdentityFixture({ sso: acme.sso, tokens: { refresh: { enabled: true } } }),
    startMemoryIdentityFixture(),
  ]);
  await acme.provide(fx.gw);
}, 60_000);

afterAll(async () => {
  await fx?.close();
  await plain?.close();
  await acme?.close();
});

/** A way to a token: readied (its credential got), then the one token request. */
interface Issuance {
  request: () => Promise<Response>;
  /** Who the token is for, as its audit event names them. */
  about: Record<string, string>;
}

interface IssuanceCase {
  kind: 'user' | 'client';
  /** The audit event it records, and what that event says beside who. */
  event: Record<string, unknown>;
  ready(): Promise<Issuance>;
}

const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields),
});

const aliceAtAcme = { user_email: ALICE.email, tenant_id: 'acme' };

/** The Basic login at `/1/token` (no `grant_type`), then one case per registry grant. */
const LOGIN: IssuanceCase = {
  kind: 'user',
  event: { event: 'token_issued' },
  ready: async () => ({
    request: () =>
      fetch(`${fx.gw.url}/1/token?tenant_id=acme`, {
        headers: { authorization: basic(ALICE.email, ALICE.password) },
      }),
    about: aliceAtAcme,
  }),
};

const CASES: Record<string, IssuanceCase> = {
  client_credentials: {
    kind: 'client',
    event: { event: 'client_token_issued', scopes: ['orders:read'] },
    async ready() {
      const client = await makeClient(fx.gw.gateway.store, 'acme', ['orders:read']);
      return {
        request: () => clientCredentials(fx.gw.url, client),
        about: { client_id: client.clientId, tenant_id: 'acme' },
      };
    },
  },
  refresh_token: {
    kind: 'user',
    event: { event: 'token_refreshed' },
    async ready() {
      const login = await tokenFor(fx.gw.url, ALICE, 'acme');
      const refreshToken = login.refresh_token as string;
      return {
        request: () =>
          fetch(
            `${fx.gw.url}/1/oauth/token`,
            form({ grant_type: 'refresh_token', refresh_token: refreshToken }),
          ),
        about: aliceAtAcme,
      };
    },
  },
  authorization_code: {
    kind: 'user',
    event: { event: 'token_issued', via: 'browser' },
    async ready() {
      const login = new URLSearchParams({
        redirect_uri: APP,
        code_challenge: CHALLENGE,
        code_challenge_method: 'S256',
      });
      const started = await throughIdp({
        gatewayUrl: fx.gw.url,
        issuer: acme.idp.issuer,
        agent: acme.agent,
        start: `${fx.gw.url}/1/tenants/acme/sso/login?${login}`,
        account: 'bea',
      });
      const back = await callback(started.callbackUrl, started.cookie);
      expect(back.status).toBe(302);
      const code = new URL(back.headers.get('location') as string).searchParams.get('code');
      return {
        request: () =>
          redeemCode(fx.gw.url, {
            code: code as string,
            redirect_uri: APP,
            code_verifier: VERIFIER,
          }),
        about: { user_email: 'bea@acme.test', tenant_id: 'acme' },
      };
    },
  },
  [EXCHANGE]: {
    kind: 'user',
    event: { event: 'federated_sign_in' },
    async ready() {
      const idToken = await acme.idp.idToken('ann', ACME_IDP_CLIENT);
      const fields = {
        grant_type: EXCHANGE,
        subject_token: idToken,
        subject_token_type: ID_TOKEN,
        tenant_id: 'acme',
      };
      return {
        request: () => fetch(`${fx.gw.url}/1/oauth/token`, form(fields)),
        about: { user_email: 'ann@acme.test', tenant_id: 'acme', issuer: acme.idp.issuer },
      };
    },
  },
};

/** The counters an issuance moves: requests of the api by principal kind, tokens by kind. */
async function counters() {
  const samples = await scrape(adminUrlOf(fx.gw));
  const requests = (principal: string) =>
    total(samples, 'tenant_gateway_requests_total', { route: 'api', principal });
  const tokens = (kind: string) => total(samples, 'tenant_gateway_tokens_issued_total', { kind });
  return {
    requests: { user: requests('user'), client: requests('client'), none: requests('none') },
    tokens: { user: tokens('user'), client: tokens('client') },
  };
}

async function acmeEvents(): Promise<Record<string, unknown>[]> {
  const log = fx.gw.gateway.store.auditLog({ maxEventsPerStream: 10_000 });
  return (await log.read('tenant:acme', 0)).map(
    (entry) => JSON.parse(entry.event) as Record<string, unknown>,
  );
}

async function expectRecorded(name: string, kase: IssuanceCase): Promise<void> {
  const { request, about } = await kase.ready();
  const before = await counters();
  const res = await request();
  expect([name, res.status]).toEqual([name, 200]);
  const { access_token } = (await res.json()) as { access_token: string };
  const after = await counters();
  const { kind } = kase;
  expect([name, after.requests]).toEqual([
    name,
    { ...before.requests, [kind]: before.requests[kind] + 1 },
  ]);
  expect([name, after.tokens]).toEqual([
    name,
    { ...before.tokens, [kind]: before.tokens[kind] + 1 },
  ]);
  const { jti } = decodeJwt(access_token);
  const events = (await acmeEvents()).filter((event) => event.jti === jti);
  expect([name, events]).toEqual([name, [expect.objectContaining({ ...kase.event, ...about })]]);
}

describe('every grant is recorded by one issued()', () => {
  it('has a case for every grant in the registry, and no other', () => {
    expect(Object.keys(CASES).sort()).toEqual(GRANTS.map((grant) => grant.type).sort());
  });

  it('the Basic login at /1/token: principal user, a user token, token_issued', async () => {
    await expectRecorded('login', LOGIN);
  });

  for (const grant of GRANTS) {
    it(`${grant.type}: its principal kind, its token counted, its audit event`, async () => {
      const kase = CASES[grant.type];
      expect(kase, `no case for the grant ${grant.type}`).toBeDefined();
      await expectRecorded(grant.type, kase as IssuanceCase);
    });
  }
});

describe('the metadata lists exactly the registry’s enabled grants', () => {
  for (const which of ['every grant on', 'sign-in and refresh off'] as const) {
    it(which, async () => {
      const gw = which === 'every grant on' ? fx : plain;
      const config = validateConfig(gw.config, process.cwd(), 'test');
      const enabled = GRANTS.filter((grant) => grant.enabled(config)).map((grant) => grant.type);
      const res = await fetch(`${gw.gw.url}/.well-known/oauth-authorization-server`);
      const listed = ((await res.json()) as { grant_types_supported: string[] })
        .grant_types_supported;
      expect(listed).toEqual(enabled);
      expect(enabled.length).toBe(which === 'every grant on' ? GRANTS.length : 1);
    });
  }
});
