/**
 * DESIGN §2 step 4: WebSocket upgrades are authenticated like any proxied
 * request and forwarded to a real `ws` echo upstream; a refused upgrade is a
 * real HTTP error response with the JSON body of DESIGN §1, never a dropped
 * socket.
 */
import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { rawExchange } from '../support/raw-exchange.js';
import { basic, bearer } from '../support/gateway.js';
import { ALICE, tokenFor, type IdentityFixture } from '../support/identity-fixture.js';
import { startSignedInFixture } from '../support/signed-in-fixture.js';
import {
  refusedUpstream,
  startSlowUpstream,
  startWebSocketUpstream,
  type CountingUpstream,
  type Upstream,
  type WebSocketUpstream,
  waitFor,
} from '../support/upstream.js';

let fx: IdentityFixture;
let wsUrl: string;
let aliceAcme: string;
let bobGlobex: string;
let upstream: WebSocketUpstream;
let refused: Upstream;
let stalled: CountingUpstream;

beforeAll(async () => {
  [upstream, refused, stalled] = await Promise.all([
    startWebSocketUpstream(),
    refusedUpstream(),
    startSlowUpstream(),
  ]);
  const signedIn = await startSignedInFixture({
    routes: [
      { prefix: '/live', upstream: upstream.url },
      {
        prefix: '/tenants',
        upstream: upstream.url,
        tenant: { path: '/tenants/:tenant_id' },
        stripAuthorization: false,
      },
      { prefix: '/down', upstream: refused.url },
      { prefix: '/stalled', upstream: stalled.url, timeoutMs: 300 },
    ],
  });
  fx = signedIn.fx;
  wsUrl = fx.gw.url.replace(/^http:/, 'ws:');
  aliceAcme = signedIn.alice.access_token;
  bobGlobex = signedIn.bob.access_token;
});

afterAll(async () => {
  await fx?.close();
  await Promise.all([upstream, refused, stalled].map((u) => u?.close()));
});

/** Opens a ws client; resolves once open, rejects on `unexpected-response` or error. */
function open(path: string, headers: Record<string, string>): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${wsUrl}${path}`, { headers });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', () => reject(new Error('unexpected response')));
    ws.once('error', reject);
  });
}

/** Sends `message` and resolves with the next message back, as sent (text or binary). */
function roundTrip(
  ws: WebSocket,
  message: string | Buffer,
): Promise<{ data: Buffer; isBinary: boolean }> {
  return new Promise((resolve) => {
    ws.once('message', (data, isBinary) => resolve({ data: data as Buffer, isBinary }));
    ws.send(message);
  });
}

function closed(ws: WebSocket): Promise<number> {
  return new Promise((resolve) => {
    if (ws.readyState === WebSocket.CLOSED) return resolve(-1);
    ws.once('close', (code) => resolve(code));
    ws.close();
  });
}

interface Refusal {
  status: number;
  headers: IncomingMessage['headers'];
  body: { error: string; error_description: string };
}

/** Attempts an upgrade that must be refused; resolves with the HTTP answer the client got. */
function refusal(path: string, headers: Record<string, string>): Promise<Refusal> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${wsUrl}${path}`, { headers });
    ws.once('open', () => {
      ws.terminate();
      reject(new Error('the upgrade was accepted'));
    });
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          const body = JSON.parse(text) as Refusal['body'];
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        } catch {
          reject(new Error(`not JSON: ${res.statusCode} ${text}`));
        }
      });
      res.on('error', reject);
    });
    // An `error` without `unexpected-response` first: the socket was dropped, no answer.
    ws.once('error', (err) => reject(new Error(`no HTTP answer: ${err.message}`)));
  });
}

function expectRefusal(refused: Refusal, status: number, code: string): void {
  expect(refused.status).toBe(status);
  expect(refused.headers['content-type']).toMatch(/^application\/json/);
  expect(refused.headers['x-request-id']).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
  expect(refused.body.error).toBe(code);
  expect(refused.body.error_description.length).toBeGreaterThan(0);
}

describe('an admitted upgrade', () => {
  it('echoes text and binary messages through the gateway', async () => {
    const ws = await open('/live/chat', { authorization: bearer(aliceAcme) });
    const text = await roundTrip(ws, 'hello through the gateway');
    expect(text).toEqual({ data: Buffer.from('hello through the gateway'), isBinary: false });
    const bytes = Buffer.from([0, 1, 2, 253, 254, 255]);
    const binary = await roundTrip(ws, bytes);
    expect(binary).toEqual({ data: bytes, isBinary: true });
    expect(await closed(ws)).toBe(1005);
  });

  it('reaches the upstream with the verified identity, not the identity the client claimed', async () => {
    const before = upstream.upgrades.length;
    const ws = await open('/live/whoami?x=1', {
      authorization: bearer(aliceAcme),
      'X-Tenant-Id': 'globex',
      x_user_id: 'someone-else',
      'X-User-Email': 'mallory@example.com',
      'x-request-id': 'ws-spoof-1',
    });
    expect((await roundTrip(ws, 'ping')).data.toString()).toBe('ping');
    await closed(ws);
    expect(upstream.upgrades.length).toBe(before + 1);
    const seen = upstream.upgrades[before]!;
    expect(upstream.upgradeUrls[before]).toBe('/live/whoami?x=1');
    const aliceId = (await tokenFor(fx.gw.url, ALICE, 'acme'))['user_id'];
    expect(seen['x-tenant-id']).toBe('acme');
    expect(seen['x-tenant-type']).toBe('orgtenant');
    expect(seen['x-user-id']).toBe(aliceId);
    expect(seen['x-user-email']).toBe(ALICE.email);
    expect(seen['x-request-id']).toBe('ws-spoof-1');
    expect(seen['x_user_id']).toBeUndefined();
    expect(Object.keys(seen).filter((k) => /^x[-_]user[-_]id$/i.test(k))).toEqual(['x-user-id']);
    // stripAuthorization by default: the upstream sees the identity headers only.
    expect(seen.authorization).toBeUndefined();
    expect(seen.upgrade).toBe('websocket');
  });

  it('passes Authorization on to the upstream on a route that asks for it (stripAuthorization: false)', async () => {
    const before = upstream.upgrades.length;
    const ws = await open('/tenants/acme/feed', { authorization: bearer(aliceAcme) });
    await closed(ws);
    expect(upstream.upgrades[before]?.authorization).toBe(bearer(aliceAcme));
    expect(upstream.upgrades[before]?.['x-tenant-id']).toBe('acme');
  });
});

describe('an upstream that fails after the upgrade', () => {
  it('closes the client abnormally (1006), without writing anything else on the WebSocket', async () => {
    const ws = await open('/live/reset', { authorization: bearer(aliceAcme) });
    expect((await roundTrip(ws, 'before')).data.toString()).toBe('before');
    const errors: Error[] = [];
    ws.on('error', (err) => errors.push(err));
    const code = new Promise<number>((resolve) => ws.once('close', resolve));
    upstream.resetAll();
    expect(await code).toBe(1006);
    expect(errors.map((e) => e.message)).toEqual([]);
  });
});

describe('a refused upgrade gets an HTTP error response', () => {
  it.each([
    ['no token', {}],
    ['Basic credentials', { authorization: basic(ALICE.email, ALICE.password) }],
  ])('%s: 401 invalid_token with the bearer challenge naming no error', async (_case, headers) => {
    const before = upstream.upgrades.length;
    const refused = await refusal('/live/chat', headers);
    expectRefusal(refused, 401, 'invalid_token');
    // RFC 6750 §3.1: no credentials, no error code.
    expect(refused.headers['www-authenticate']).toBe('Bearer realm="tenant-gateway"');
    expect(upstream.upgrades.length).toBe(before);
  });

  it('a malformed token: 401 invalid_token with the error in the challenge', async () => {
    const refused = await refusal('/live/chat', { authorization: bearer('nope') });
    expectRefusal(refused, 401, 'invalid_token');
    expect(refused.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
  });

  it("another tenant's token on a route with a tenant path rule: 403 tenant_mismatch", async () => {
    const before = upstream.upgrades.length;
    const refused = await refusal('/tenants/acme/feed', { authorization: bearer(bobGlobex) });
    expectRefusal(refused, 403, 'tenant_mismatch');
    expect(upstream.upgrades.length).toBe(before);
  });

  it('an upstream that refuses the connection: 502 bad_gateway', async () => {
    expectRefusal(
      await refusal('/down/chat', { authorization: bearer(aliceAcme) }),
      502,
      'bad_gateway',
    );
  });

  it('an upstream that does not answer the upgrade within timeoutMs: 504 gateway_timeout', async () => {
    const refused = await refusal('/stalled/chat', { authorization: bearer(aliceAcme) });
    expectRefusal(refused, 504, 'gateway_timeout');
    expect(stalled.counts.received).toBe(1);
    await waitFor(() => stalled.counts.aborted === 1 && stalled.counts.open === 0, 1000);
  });

  it('a path with no route: 404 not_found', async () => {
    const refused = await refusal('/nowhere/chat', { authorization: bearer(aliceAcme) });
    expectRefusal(refused, 404, 'not_found');
  });

  it('an admitted upgrade to another protocol than WebSocket: 400 invalid_request, not a dropped socket', async () => {
    const { port } = new URL(fx.gw.url);
    const raw = await rawExchange(
      Number(port),
      'GET /live/h2 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade, HTTP2-Settings\r\n' +
        `Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\nAuthorization: ${bearer(aliceAcme)}\r\n\r\n`,
    );
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(raw).toMatch(/\r\ncontent-type: application\/json/i);
    expect(raw).toMatch(/\r\nx-request-id: [A-Za-z0-9._:-]+\r\n/i);
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toMatchObject({
      error: 'invalid_request',
    });
  });

  it('the request id the client sent comes back on the refusal', async () => {
    const refused = await refusal('/live/chat', { 'x-request-id': 'ws-refused-7' });
    expect(refused.headers['x-request-id']).toBe('ws-refused-7');
  });
});
