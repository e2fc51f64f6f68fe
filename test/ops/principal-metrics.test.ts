/**
 * Issue 32, item 5: requests are countable by the kind of principal they
 * acted for, never by its id. A running gateway (on the memory store: the
 * store is not the subject) takes a user's token, a machine client's token
 * and its API key (both spellings) on one tenant-header route, and requests
 * that prove no credential; `/metrics` then counts
 * `tenant_gateway_requests_total` by its `principal` label (`user`,
 * `client`, `api_key`, `none`), and the duration histograms carry no such
 * label.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { fixtureSuite } from '../support/fixture-suite.js';
import { adminUrlOf, basic, bearer } from '../support/gateway.js';
import { ALICE } from '../support/identity-fixture.js';
import { makeApiKey, makeClient } from '../support/machine-client.js';
import { scrape, total, type Sample } from '../support/prometheus-text.js';
import { startEchoUpstream } from '../support/upstream.js';

const TIMEOUT = 60_000;
const REQUESTS = 'tenant_gateway_requests_total';
const ROUTE = '/orders';

const s = fixtureSuite({ echo: startEchoUpstream }, ({ echo }) => ({
  apiKeys: { enabled: true },
  routes: [{ prefix: ROUTE, upstream: echo.url, tenant: { header: 'X-Tenant-Id' } }],
}));
let samples: Sample[];

/** Proxied GET on the route for tenant `acme` (or `tenant`), with `authorization` if any. */
async function get(
  authorization: string | undefined,
  tenant = 'acme',
  extra: Record<string, string> = {},
): Promise<number> {
  const headers: Record<string, string> = { 'x-tenant-id': tenant, ...extra };
  if (authorization !== undefined) headers.authorization = authorization;
  const res = await fetch(`${s.gw.url}${ROUTE}/items`, { headers });
  await res.arrayBuffer();
  return res.status;
}

beforeAll(async () => {
  // As `client add --scopes orders:read` and `client key add` make them.
  const client = await makeClient(s.gw.gateway.store, 'acme', ['orders:read']);
  const { apiKey } = await makeApiKey(s.gw.gateway.store, client.clientId);

  const login = await fetch(`${s.gw.url}/1/token?tenant_id=acme`, {
    headers: { authorization: basic(ALICE.email, ALICE.password) },
  });
  expect(login.status).toBe(200);
  const userToken = ((await login.json()) as { access_token: string }).access_token;
  const grant = await fetch(`${s.gw.url}/1/oauth/token`, {
    method: 'POST',
    headers: {
      authorization: basic(client.clientId, client.clientSecret),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  });
  expect(grant.status).toBe(200);
  const clientToken = ((await grant.json()) as { access_token: string }).access_token;

  for (let i = 0; i < 2; i++) expect(await get(bearer(userToken))).toBe(200);
  expect(await get(bearer(userToken), 'globex')).toBe(403);
  for (let i = 0; i < 3; i++) expect(await get(bearer(clientToken))).toBe(200);
  expect(await get(bearer(apiKey))).toBe(200);
  expect(await get(undefined, 'acme', { 'x-api-key': apiKey })).toBe(200);
  expect(await get(undefined, 'globex', { 'x-api-key': apiKey })).toBe(403);
  expect(await get(undefined)).toBe(401);
  expect(await get(bearer(`${userToken.slice(0, -2)}xx`))).toBe(401);

  samples = await scrape(adminUrlOf(s.gw));
}, TIMEOUT);

describe('tenant_gateway_requests_total by principal', () => {
  it('counts a user token’s requests as user and a client token’s as client', () => {
    expect(total(samples, REQUESTS, { route: ROUTE, principal: 'user', outcome: 'accepted' })).toBe(
      2,
    );
    expect(
      total(samples, REQUESTS, { route: ROUTE, principal: 'client', outcome: 'accepted' }),
    ).toBe(3);
  });

  it('counts an API key’s requests as api_key, in either spelling', () => {
    expect(
      total(samples, REQUESTS, { route: ROUTE, principal: 'api_key', outcome: 'accepted' }),
    ).toBe(2);
  });

  it('counts a refusal after the credential proved who it is under that principal', () => {
    expect(
      total(samples, REQUESTS, { route: ROUTE, principal: 'user', reason: 'tenant_mismatch' }),
    ).toBe(1);
    expect(
      total(samples, REQUESTS, { route: ROUTE, principal: 'api_key', reason: 'tenant_mismatch' }),
    ).toBe(1);
  });

  it('counts a request that proved no credential as none', () => {
    expect(total(samples, REQUESTS, { route: ROUTE, principal: 'none', code: '401' })).toBe(2);
    expect(total(samples, REQUESTS, { route: ROUTE, principal: 'none', outcome: 'accepted' })).toBe(
      0,
    );
  });

  it('counts the token endpoints by the principal that authenticated', () => {
    expect(total(samples, REQUESTS, { route: 'api', principal: 'user', code: '200' })).toBe(1);
    expect(total(samples, REQUESTS, { route: 'api', principal: 'client', code: '200' })).toBe(1);
  });

  it('every series has a principal label of the fixed set, none an id', () => {
    const series = samples.filter((s) => s.name === REQUESTS);
    expect(series.length).toBeGreaterThan(0);
    for (const s of series)
      expect(['user', 'client', 'api_key', 'none']).toContain(s.labels.principal);
    expect(total(samples, REQUESTS, { route: ROUTE })).toBe(11);
  });

  it('the duration histograms have no principal label', () => {
    const histograms = samples.filter((s) => /_duration_seconds_(bucket|count|sum)$/.test(s.name));
    expect(histograms.length).toBeGreaterThan(0);
    for (const s of histograms) expect(s.labels).not.toHaveProperty('principal');
  });
});
