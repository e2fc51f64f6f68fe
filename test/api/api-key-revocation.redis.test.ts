/**
 * Issue 32, API keys across instances: two gateways on one redis-server in
 * lease mode, and a third 200 ms from Redis through the delaying relay. A
 * steady stream of requests with a key makes no Redis call (its last use is
 * written in the background); `curl` with a key is refused on every instance
 * as soon as the key's removal returns, through any of them; an open
 * WebSocket of the key is closed 1008; a wrong key costs the same store work
 * whichever of its parts is wrong.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startGatewayBehind, waitUntilTrusted } from '../support/gateway-behind.js';
import type { TestGateway } from '../support/gateway.js';
import { startIdentityFixture, type RedisIdentityFixture } from '../support/identity-fixture.js';
import { forgedApiKey, makeApiKey, makeClient } from '../support/machine-client.js';
import { commandsDuring, leaseRenewals } from '../support/redis-commands.js';
import { startTcpRelay, type TcpRelay } from '../support/tcp-relay.js';
import {
  startEchoUpstream,
  startWebSocketUpstream,
  type Upstream,
  type WebSocketUpstream,
} from '../support/upstream.js';

const run = promisify(execFile);
const LEASE_MS = 2000;

let fx: RedisIdentityFixture;
let a: TestGateway;
let b: TestGateway;
let relay: TcpRelay;
let slow: TestGateway;
let live: WebSocketUpstream;
let echo: Upstream;
let dir: string;

beforeAll(async () => {
  live = await startWebSocketUpstream();
  echo = await startEchoUpstream();
  dir = mkdtempSync(join(tmpdir(), 'tg-keys-'));
  fx = await startIdentityFixture({
    revocation: { mode: 'lease', leaseMs: LEASE_MS },
    apiKeys: { enabled: true },
    routes: [
      { prefix: '/live', upstream: live.url },
      { prefix: '/api', upstream: echo.url, tenant: { header: 'X-Tenant-Id' } },
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
  await live?.close();
  await echo?.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * `curl` as an API client runs it: the key in a header file (`-H @file`),
 * never in its argv; returns the status.
 */
async function curl(gw: TestGateway, apiKey: string, path = '/api/orders'): Promise<number> {
  const headers = join(dir, `h-${Math.random().toString(36).slice(2)}`);
  writeFileSync(headers, `X-API-Key: ${apiKey}\nX-Tenant-Id: acme\n`, { mode: 0o600 });
  try {
    const { stdout } = await run('curl', [
      '-s',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code}',
      '-H',
      `@${headers}`,
      `${gw.url}${path}`,
    ]);
    return Number(stdout);
  } finally {
    rmSync(headers, { force: true });
  }
}

async function newKey(): Promise<{ clientId: string; keyId: string; apiKey: string }> {
  const { clientId } = await makeClient(a.gateway.store, 'acme', ['orders:read']);
  return { clientId, ...(await makeApiKey(a.gateway.store, clientId)) };
}

it('a steady stream of requests with a key makes no Redis call; its last use is written in the background', async () => {
  const key = await newKey();
  const get = () =>
    fetch(`${b.url}/api/x`, { headers: { 'x-api-key': key.apiKey, 'x-tenant-id': 'acme' } });
  expect((await get()).status).toBe(200); // warms b's cache
  // The last use, written within the flush interval (10 s), not by the request.
  const deadline = Date.now() + 15_000;
  let lastUsedAt: number | undefined;
  while (lastUsedAt === undefined && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    lastUsedAt = (await a.gateway.store.apiKeys.getApiKey(key.keyId))?.lastUsedAt;
  }
  expect(lastUsedAt).toBeGreaterThan(Date.now() / 1000 - 30);
  const redis = new Redis(fx.redis.url);
  try {
    const calls = await commandsDuring(redis, async () => {
      for (let i = 0; i < 200; i++) expect((await get()).status).toBe(200);
    });
    expect(calls.data).toBe(0);
    expect(calls.scripts).toBeLessThanOrEqual(leaseRenewals(3, LEASE_MS, calls.elapsedMs));
  } finally {
    redis.disconnect();
  }
}, 40_000);

describe('a removed key, on every instance before the removal returns', () => {
  it('curl with it: 200 everywhere, then 401 everywhere, near and far', async () => {
    const key = await newKey();
    for (const gw of [a, b, slow]) expect(await curl(gw, key.apiKey)).toBe(200);
    // Through the far instance: its confirmation waits for the near ones too.
    expect(await slow.gateway.store.apiKeys.removeApiKey(key.clientId, key.keyId)).toBe(true);
    const after = await Promise.all([a, b, slow].map((gw) => curl(gw, key.apiKey)));
    expect(after).toEqual([401, 401, 401]);
  }, 30_000);

  it('the same through the near instance, and with its client removed', async () => {
    const key = await newKey();
    const sibling = await makeApiKey(a.gateway.store, key.clientId);
    for (const k of [key.apiKey, sibling.apiKey])
      for (const gw of [a, b, slow]) expect(await curl(gw, k)).toBe(200);
    expect(await a.gateway.store.apiKeys.removeApiKey(key.clientId, key.keyId)).toBe(true);
    expect(await Promise.all([b, slow].map((gw) => curl(gw, key.apiKey)))).toEqual([401, 401]);
    expect(await Promise.all([b, slow].map((gw) => curl(gw, sibling.apiKey)))).toEqual([200, 200]);
    expect(await b.gateway.store.clients.removeClient(key.clientId)).toEqual([sibling.keyId]);
    expect(await Promise.all([a, slow].map((gw) => curl(gw, sibling.apiKey)))).toEqual([401, 401]);
  }, 30_000);

  it('an open WebSocket of the key is closed 1008 on the far instance', async () => {
    const key = await newKey();
    const ws = new WebSocket(`${slow.url.replace(/^http:/, 'ws:')}/live/feed`, {
      headers: { 'x-api-key': key.apiKey },
    });
    ws.on('error', () => {});
    const closed = new Promise<number>((done) => ws.once('close', (code) => done(code)));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('unexpected-response', (_req, res) =>
        reject(new Error(`upgrade refused: ${res.statusCode}`)),
      );
    });
    expect(live.upgrades.at(-1)?.['x-api-key']).toBeUndefined();
    expect(live.upgrades.at(-1)?.['x-client-id']).toBe(key.clientId);
    await a.gateway.store.apiKeys.removeApiKey(key.clientId, key.keyId);
    const code = await Promise.race([
      closed,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('still open after 5 s')), 5000),
      ),
    ]);
    expect(code).toBe(1008);
  }, 30_000);
});

it('a wrong key costs the same store work whichever part is wrong (no timing oracle)', async () => {
  const key = await newKey();
  const wrongSecret = forgedApiKey(key.apiKey, 40); // the right key id, checksum made right
  const wrongId = forgedApiKey(key.apiKey, 10); // another key id, checksum made right
  const redis = new Redis(fx.redis.url);
  try {
    const costs = [];
    for (const k of [wrongSecret, wrongId]) {
      const calls = await commandsDuring(redis, async () => {
        const res = await fetch(`${b.url}/api/x`, {
          headers: { 'x-api-key': k, 'x-tenant-id': 'acme' },
        });
        expect(res.status).toBe(401);
        expect(await res.json()).toMatchObject({ error: 'invalid_token' });
      });
      costs.push(calls.data);
    }
    // One read of the key each, and no more.
    expect(costs).toEqual([1, 1]);
  } finally {
    redis.disconnect();
  }
}, 30_000);
