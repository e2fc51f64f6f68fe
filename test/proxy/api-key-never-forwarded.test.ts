/**
 * Issue 42, finding 10: a gateway API key (`tgk_…`) never reaches an
 * upstream, under any header or scheme — even on a route that keeps
 * `Authorization` (`stripAuthorization: false`), with API keys on (a custom
 * `apiKeys.header`) or off. A real upstream records what it receives; the
 * key sent as `Authorization: Token`, inside Basic credentials, percent-
 * escaped, in `Proxy-Authorization`, in a cookie, in `X-API-Key` and the
 * configured header, in any other header: none of it arrives. What is not a
 * key still crosses: another scheme's credential, a long cookie with `tgk_`
 * not followed by a key id, the bearer token of a route that keeps it.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, bearer } from '../support/gateway.js';
import {
  ALICE,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../support/identity-fixture.js';
import { makeApiKey, makeClient } from '../support/machine-client.js';
import { startRecordingUpstream, type RecordingUpstream } from '../support/recording-upstream.js';

let upstream: RecordingUpstream;
/** API keys on, in `X-Gateway-Key`. */
let on: IdentityFixture;
/** API keys off. */
let off: IdentityFixture;
let apiKey: string;

beforeAll(async () => {
  upstream = await startRecordingUpstream();
  const routes = [
    { prefix: '/open', upstream: upstream.url, auth: 'none', stripAuthorization: false },
    { prefix: '/keep', upstream: upstream.url, stripAuthorization: false },
  ];
  [on, off] = await Promise.all([
    startMemoryIdentityFixture({ routes, apiKeys: { enabled: true, header: 'X-Gateway-Key' } }),
    startMemoryIdentityFixture({ routes }),
  ]);
  const { clientId } = await makeClient(on.gw.gateway.store, 'acme', []);
  apiKey = (await makeApiKey(on.gw.gateway.store, clientId)).apiKey;
});
afterAll(async () => {
  await on?.close();
  await off?.close();
  await upstream?.close();
});

/** What the upstream received for one GET of `path` with `headers`. */
async function received(
  fx: IdentityFixture,
  path: string,
  headers: Record<string, string>,
): Promise<IncomingHttpHeaders> {
  const before = upstream.requests.length;
  const res = await fetch(`${fx.gw.url}${path}`, { headers });
  await res.arrayBuffer();
  expect(res.status).toBe(200);
  expect(upstream.requests.length).toBe(before + 1);
  return (upstream.requests[before] as { headers: IncomingHttpHeaders }).headers;
}

/** The parts of a key an upstream must never see: its id part and its secret. */
function keyParts(key: string): string[] {
  // tgk_<16 id characters>_<43 secret characters>_<6 checksum characters>; the secret may hold `_`.
  return [key.slice(0, 20), key.slice(21, 64)];
}

describe('an API key in a header', () => {
  const carriers = (key: string): [string, Record<string, string>][] => [
    ['Authorization: Token', { authorization: `Token ${key}` }],
    ['Authorization: ApiKey, lower-case scheme', { authorization: `apikey ${key}` }],
    ['Authorization: Basic user:key', { authorization: basic('svc', key) }],
    [
      'Authorization: Basic key:',
      { authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` },
    ],
    ['Authorization, percent-escaped', { authorization: `Token ${key.replaceAll('_', '%5F')}` }],
    ['Proxy-Authorization', { 'proxy-authorization': `Bearer ${key}` }],
    ['Cookie', { cookie: `sid=abc; api_key=${key}` }],
    [
      'Cookie, percent-escaped',
      { cookie: `sid=abc; api_key=${encodeURIComponent(key).replaceAll('_', '%5f')}` },
    ],
    ['X-API-Key', { 'x-api-key': key }],
    ['X_Api_Key', { x_api_key: key }],
    ['the configured header', { 'x-gateway-key': key }],
    ['any other header', { 'x-upstream-auth': `key=${key}` }],
    ['Sec-WebSocket-Protocol', { 'sec-websocket-protocol': `chat, ${key}` }],
  ];

  it('never reaches the upstream of a route that keeps Authorization, keys on or off', async () => {
    for (const [fx, name] of [
      [on, 'keys on'],
      [off, 'keys off'],
    ] as const) {
      for (const [how, headers] of carriers(apiKey)) {
        const got = JSON.stringify(await received(fx, '/open/x', headers));
        for (const part of keyParts(apiKey))
          expect(got.includes(part), `${name}, ${how}: ${got}`).toBe(false);
      }
    }
  });

  it('a key in X-Gateway-Key admits, and a key in Authorization under another scheme does not cross beside it', async () => {
    const got = await received(on, '/keep/x', {
      'x-gateway-key': apiKey,
      'x-tenant-id': 'acme',
      authorization: `Token ${apiKey}`,
    });
    expect(got['x-tenant-id']).toBe('acme');
    expect(got.authorization).toBeUndefined();
    expect(JSON.stringify(got)).not.toContain(keyParts(apiKey)[1]);
  });
});

describe('what is not a key still crosses', () => {
  it("another scheme's credential, a long value with tgk_ but no key id, a kept bearer token", async () => {
    const other = `Token ${'x'.repeat(80)}`;
    const run = `sid=${'A'.repeat(40)}tgk_abcdefgh_${'B'.repeat(40)}`;
    const prose = `see tgk_ keys, tgk_abc_ and ${'z'.repeat(60)}`;
    let got = await received(on, '/open/x', { authorization: other, cookie: run, 'x-note': prose });
    expect([got.authorization, got.cookie, got['x-note']]).toEqual([other, run, prose]);
    const token = (await tokenFor(on.gw.url, ALICE, 'acme')).access_token;
    got = await received(on, '/keep/x', { authorization: bearer(token), 'x-tenant-id': 'acme' });
    expect(got.authorization).toBe(bearer(token));
  });
});
