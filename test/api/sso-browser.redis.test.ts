/**
 * The browser sign-in on the Redis store, across two gateways sharing it: a
 * sign-in started at one instance finishes at the other, and its one-time
 * records are taken once whatever the race (GETDEL) — a callback replayed
 * and a code redeemed at both instances at once give one success each.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { createSecretSealer } from '../../src/auth/sealed-secrets.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestGateway } from '../support/gateway.js';
import { startIdentityFixture, type RedisIdentityFixture } from '../support/identity-fixture.js';
import { makeTestCa, startTestIdp, type TestCa, type TestIdp } from '../support/oidc-idp.js';
import { callback, redeemCode, throughIdp } from '../support/sso-sign-in.js';
import { verifyDomains } from '../support/verified-domains.js';

const CLIENT = { clientId: 'gateway-acme', clientSecret: 'acme-secret-0123456789abcdef' };
const APP = 'https://app.example.test/signed-in';

let ca: TestCa;
let idp: TestIdp;
let agent: Agent;
let fx: RedisIdentityFixture;
let other: TestGateway;
let keyDir: string;

beforeAll(async () => {
  ca = makeTestCa();
  agent = new Agent({ connect: { ca: ca.ca } });
  idp = await startTestIdp({
    ca,
    alg: 'ES256',
    clients: [CLIENT],
    accounts: { ann: { email: 'ann@acme.test', emailVerified: true } },
  });
  keyDir = mkdtempSync(join(tmpdir(), 'tg-sso-redis-'));
  const keyFile = join(keyDir, 'sso.key');
  const key = randomBytes(32);
  writeFileSync(keyFile, `${key.toString('base64')}\n`);
  fx = await startIdentityFixture({
    // The IdP is on loopback.
    sso: {
      enabled: true,
      ca: ca.caFile,
      secretsKeyFile: keyFile,
      redirectUris: [APP],
      allowPrivateIssuers: true,
    },
  });
  other = await fx.startAnother();
  // Both instances' callbacks: a sign-in goes back to the one the browser addressed.
  idp.allowRedirectUri(`${fx.gw.url}/1/sso/callback`);
  const sealed = createSecretSealer(key).seal(CLIENT.clientSecret, 'acme');
  await verifyDomains(fx.gw.gateway.store, 'acme', ['acme.test']);
  await fx.gw.gateway.store.idps.setTenantIdp({
    tenantId: 'acme',
    issuer: idp.issuer,
    clientId: CLIENT.clientId,
    clientSecretSealed: sealed,
    domains: ['acme.test'],
    role: 'member',
    linkExisting: false,
    updatedAt: Math.floor(Date.now() / 1000),
  });
}, 60_000);

afterAll(async () => {
  await other?.close();
  await fx?.close();
  await idp?.close();
  await agent?.close();
  ca?.close();
  if (keyDir !== undefined) rmSync(keyDir, { recursive: true, force: true });
});

const VERIFIER = randomBytes(32).toString('base64url');
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');

const start = (gw: TestGateway) =>
  `${gw.url}/1/tenants/acme/sso/login?${new URLSearchParams({ redirect_uri: APP, code_challenge: CHALLENGE, code_challenge_method: 'S256' })}`;

it('takes a callback once and a code once, whichever instance asks, concurrently', async () => {
  const started = await throughIdp({
    gatewayUrl: fx.gw.url,
    issuer: idp.issuer,
    agent,
    start: start(fx.gw),
    account: 'ann',
  });
  // The same callback at both instances at once (the other's URL, the same query).
  const atOther = started.callbackUrl.replace(fx.gw.url, other.url);
  const answers = await Promise.all([
    callback(started.callbackUrl, started.cookie),
    callback(atOther, started.cookie),
  ]);
  expect(answers.map((r) => r.status).sort()).toEqual([302, 400]);
  const won = answers.find((r) => r.status === 302) as Response;
  const code = new URL(won.headers.get('location') as string).searchParams.get('code') as string;
  const redeemed = await Promise.all(
    [fx.gw, other].map((gw) =>
      redeemCode(gw.url, { code, redirect_uri: APP, code_verifier: VERIFIER }),
    ),
  );
  expect(redeemed.map((r) => r.status).sort()).toEqual([200, 400]);
}, 60_000);
