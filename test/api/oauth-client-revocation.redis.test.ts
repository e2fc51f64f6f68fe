/**
 * Issue 32: a machine client removed or rotated ends its tokens on every
 * instance before the command returns — two gateways on one redis-server in
 * lease mode, the change made through one (a store call, as the CLI and the
 * admin API make it), the token tried on the other right after; also with
 * that other instance 200 ms from Redis through the delaying relay, and on a
 * WebSocket held open through it (closed 1008).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { newClientSecret, secretDigest } from '../../src/auth/secrets.js';
import { startGatewayBehind, waitUntilTrusted } from '../support/gateway-behind.js';
import { bearer, type TestGateway } from '../support/gateway.js';
import { startIdentityFixture, type RedisIdentityFixture } from '../support/identity-fixture.js';
import { clientCredentials, clientToken, makeClient } from '../support/machine-client.js';
import { startTcpRelay, type TcpRelay } from '../support/tcp-relay.js';
import { Redis } from 'ioredis';
import { commandsDuring, leaseRenewals } from '../support/redis-commands.js';
import {
  startEchoUpstream,
  startWebSocketUpstream,
  type Upstream,
  type WebSocketUpstream,
} from '../support/upstream.js';

const LEASE_MS = 2000;

let fx: RedisIdentityFixture;
let a: TestGateway;
let b: TestGateway;
let relay: TcpRelay;
let slow: TestGateway;
let upstream: WebSocketUpstream;
let echo: Upstream;

beforeAll(async () => {
  upstream = await startWebSocketUpstream();
  echo = await startEchoUpstream();
  fx = await startIdentityFixture({
    revocation: { mode: 'lease', leaseMs: LEASE_MS },
    routes: [
      { prefix: '/live', upstream: upstream.url },
      { prefix: '/api', upstream: echo.url },
    ],
  });
  a = fx.gw;
  b = await fx.startAnother();
  await waitUntilTrusted(a);
  await waitUntilTrusted(b);
  relay = await startTcpRelay(fx.redis.port, { delayMs: 200 });
  slow = await startGatewayBehind(fx, relay);
}, 60_000);
afterAll(async () => {
  await slow?.close();
  await relay?.close();
  await fx?.close();
  await upstream?.close();
  await echo?.close();
});

const tenantOn = (gw: TestGateway, token: string) =>
  fetch(`${gw.url}/1/tenants/current`, { headers: { authorization: bearer(token) } });

it('a steady stream of proxied requests with a client token makes no Redis call', async () => {
  const client = await makeClient(a.gateway.store, 'acme', ['orders:read']);
  const token = await clientToken(a.url, client);
  const get = () => fetch(`${b.url}/api/x`, { headers: { authorization: bearer(token) } });
  expect((await get()).status).toBe(200); // warms b's caches
  const redis = new Redis(fx.redis.url);
  try {
    const calls = await commandsDuring(redis, async () => {
      for (let i = 0; i < 200; i++) expect((await get()).status).toBe(200);
    });
    expect(calls.data).toBe(0);
    // Only the three instances' lease renewals, which run whatever the traffic.
    expect(calls.scripts).toBeLessThanOrEqual(leaseRenewals(3, LEASE_MS, calls.elapsedMs));
  } finally {
    redis.disconnect();
  }
}, 30_000);

describe('on every instance, before the change returns', () => {
  it('a removed client: its token is 401 on the other instances, near and far', async () => {
    const client = await makeClient(a.gateway.store, 'acme', ['orders:read']);
    const token = await clientToken(a.url, client);
    // Warm: accepted (so cached) everywhere.
    for (const gw of [a, b, slow]) expect((await tenantOn(gw, token)).status).toBe(200);
    expect(await a.gateway.store.clients.removeClient(client.clientId)).toEqual([]);
    const after = await Promise.all([b, slow, a].map((gw) => tenantOn(gw, token)));
    expect(after.map((res) => res.status)).toEqual([401, 401, 401]);
    expect((await clientCredentials(b.url, client)).status).toBe(401);
  }, 30_000);

  it('a rotated client: the old token is 401 everywhere, one issued with the new secret is good', async () => {
    const client = await makeClient(b.gateway.store, 'acme', ['orders:read']);
    const tokens = await Promise.all([clientToken(a.url, client), clientToken(slow.url, client)]);
    for (const token of tokens)
      for (const gw of [a, b, slow]) expect((await tenantOn(gw, token)).status).toBe(200);
    const secret = newClientSecret();
    // Through the far instance: its confirmation waits for the near ones too.
    await slow.gateway.store.clients.rotateClientSecret(client.clientId, secretDigest(secret), 1);
    for (const token of tokens) {
      const after = await Promise.all([a, b, slow].map((gw) => tenantOn(gw, token)));
      expect(after.map((res) => res.status)).toEqual([401, 401, 401]);
    }
    const fresh = await clientToken(b.url, { ...client, clientSecret: secret });
    for (const gw of [a, b, slow]) expect((await tenantOn(gw, fresh)).status).toBe(200);
  }, 30_000);

  it('a removed tenant takes its clients and their tokens with it', async () => {
    const created = await a.gateway.store.tenants.upsertTenant(
      {
        tenantId: 'initech',
        type: 'orgtenant',
        name: 'Initech',
        cloudRegion: 'eu-west-1',
        createdBy: 'nobody',
      },
      Math.floor(Date.now() / 1000),
    );
    expect(created.tenantId).toBe('initech');
    const client = await makeClient(a.gateway.store, 'initech', ['orders:read']);
    const token = await clientToken(a.url, client);
    for (const gw of [a, b, slow]) expect((await tenantOn(gw, token)).status).toBe(200);
    expect(await b.gateway.store.tenants.removeOrgTenant('initech')).toEqual([]);
    const after = await Promise.all([a, b, slow].map((gw) => tenantOn(gw, token)));
    expect(after.map((res) => res.status)).toEqual([401, 401, 401]);
  }, 30_000);
});

describe('an open WebSocket', () => {
  it('is closed 1008 on the other instance when its client is removed', async () => {
    const client = await makeClient(a.gateway.store, 'acme', ['orders:read']);
    const token = await clientToken(a.url, client);
    const ws = new WebSocket(`${slow.url.replace(/^http:/, 'ws:')}/live/feed`, {
      headers: { authorization: bearer(token) },
    });
    ws.on('error', () => {});
    const closed = new Promise<number>((done) => ws.once('close', (code) => done(code)));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('unexpected-response', (_req, res) =>
        reject(new Error(`upgrade refused: ${res.statusCode}`)),
      );
    });
    await a.gateway.store.clients.removeClient(client.clientId);
    const code = await Promise.race([
      closed,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('still open after 5 s')), 5000),
      ),
    ]);
    expect(code).toBe(1008);
  }, 30_000);
});
