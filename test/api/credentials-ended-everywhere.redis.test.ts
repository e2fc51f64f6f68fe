/**
 * Credentials ended on every instance before the answer: two gateways on one
 * redis-server in lease mode, and a third 200 ms from Redis through the
 * delaying relay (`useTwoInstances` with `slowRelay`). A machine client
 * removed or rotated, an API key removed, a refresh token reused or revoked:
 * refused everywhere, near and far, once the change returns; a steady stream
 * of requests with any of them makes no Redis call. Last, a refresh token
 * forged from an access token's public family id, on each store of the built
 * process. One redis-server for the file, and one set of the three instances
 * for the blocks across instances (their config has all that any of them
 * needs; a set took ~6 s to start). Each test makes its own clients, keys,
 * users and families, so none depends on what another left, and the tests
 * that only wait on the far instance's link run side by side; those that
 * count Redis commands or refreshes run alone. The API-key block runs last of
 * the three: the last-use writes its keys leave behind (a script on each
 * instance's 10 s timer) then fall in no window where another block counts
 * the Redis commands of a steady stream.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Redis } from 'ioredis';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { changePassword, refreshAt, signUp } from '../support/account-requests.js';
import { checksum, newClientSecret, secretDigest } from '../../src/auth/clients/secrets.js';
import { expectError } from '../support/expect-error.js';
import {
  OPERATOR,
  SEED_YAML,
  TENANT,
  signingKeyFile,
  startGatewayProcess,
  stopGatewayProcesses,
  type GatewayProcess,
} from '../support/gateway-process.js';
import { basic, bearer, uniquePrefix, type TestGateway } from '../support/gateway.js';
import { ALICE } from '../support/identity-fixture.js';
import {
  clientCredentials,
  clientToken,
  forgedApiKey,
  makeApiKey,
  makeClient,
} from '../support/machine-client.js';
import { scrape, total } from '../support/prometheus-text.js';
import { commandsDuring, leaseRenewals, plainCommandsDuring } from '../support/redis-commands.js';
import { startRedisServer, type TestRedisServer } from '../support/redis-server.js';
import { useTwoInstances } from '../support/two-instances.js';
import { startWebSocketUpstream, type WebSocketUpstream } from '../support/upstream.js';

let server: TestRedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await stopGatewayProcesses();
  await server?.stop();
});

const LEASE_MS = 2000;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

interface TokenAnswer {
  access_token: string;
  refresh_token: string;
}

const tenantOn = (gw: { url: string }, token: string) =>
  fetch(`${gw.url}/1/tenants/current`, { headers: { authorization: bearer(token) } });

const refresh = (gw: { url: string }, token: string) => refreshAt(gw.url, token);

async function refreshed(gw: { url: string }, token: string): Promise<TokenAnswer> {
  const res = await refresh(gw, token);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as TokenAnswer;
}

async function login(gw: { url: string }, user = ALICE, tenantId = 'acme'): Promise<TokenAnswer> {
  const res = await fetch(`${gw.url}/1/token?tenant_id=${tenantId}`, {
    headers: { authorization: basic(user.email, user.password) },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as TokenAnswer;
}

/** What anyone holding an access token builds: `tgr_<fid>_<43 random chars>_<crc>`. */
function forgedFor(accessToken: string): string {
  const fid = decodeJwt(accessToken).fid as string;
  const body = `tgr_${fid}_${randomBytes(32).toString('base64url')}`;
  return `${body}_${checksum(body)}`;
}

/**
 * 200 requests with warm caches make no Redis call: only the three
 * instances' lease renewals, which run whatever the traffic.
 */
async function expectNoRedisCall(redis: Redis, get: () => Promise<Response>): Promise<void> {
  const calls = await commandsDuring(redis, async () => {
    for (let i = 0; i < 200; i++) expect((await get()).status).toBe(200);
  });
  expect(calls.data).toBe(0);
  expect(calls.scripts).toBeLessThanOrEqual(leaseRenewals(3, LEASE_MS, calls.elapsedMs));
}

/**
 * A WebSocket to `gw`'s `/live/feed`, open; returns a wait for its close
 * code (an error past 5 s).
 */
async function openLiveSocket(
  gw: TestGateway,
  headers: Record<string, string>,
): Promise<() => Promise<number>> {
  const ws = new WebSocket(`${gw.url.replace(/^http:/, 'ws:')}/live/feed`, { headers });
  ws.on('error', () => {});
  const closed = new Promise<number>((done) => ws.once('close', (code) => done(code)));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_req, res) =>
      reject(new Error(`upgrade refused: ${res.statusCode}`)),
    );
  });
  return () =>
    Promise.race([
      closed,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('still open after 5 s')), 5000),
      ),
    ]);
}

/** The WebSocket upstream of the instances' `/live` route. */
let live: WebSocketUpstream;
beforeAll(async () => {
  live = await startWebSocketUpstream();
});
afterAll(() => live?.close());

/**
 * Two gateways on one redis-server in lease mode, and a third 200 ms from
 * Redis through the delaying relay; API keys and refresh tokens on, `/live`
 * to the WebSocket upstream and `/api` to the echo one (a request that names
 * no tenant in `X-Tenant-Id` is for its credential's).
 */
const t = useTwoInstances(
  () => server,
  (echo) => ({
    revocation: { mode: 'lease', leaseMs: LEASE_MS },
    apiKeys: { enabled: true },
    tokens: { refresh: { enabled: true } },
    routes: [
      { prefix: '/live', upstream: live.url },
      { prefix: '/api', upstream: echo, tenant: { header: 'X-Tenant-Id' } },
    ],
  }),
  { slowRelay: true },
);

/**
 * Issue 32: a machine client removed or rotated ends its tokens on every
 * instance before the command returns — two gateways on one redis-server in
 * lease mode, the change made through one (a store call, as the CLI and the
 * admin API make it), the token tried on the other right after; also with
 * that other instance 200 ms from Redis through the delaying relay, and on a
 * WebSocket held open through it (closed 1008).
 */
describe('a machine client removed or rotated', () => {
  it('a steady stream of proxied requests with a client token makes no Redis call', async () => {
    const client = await makeClient(t.a.gateway.store, 'acme', ['orders:read']);
    const token = await clientToken(t.a.url, client);
    const get = () => fetch(`${t.b.url}/api/x`, { headers: { authorization: bearer(token) } });
    expect((await get()).status).toBe(200); // warms b's caches
    await expectNoRedisCall(t.redis, get);
  }, 30_000);

  // Side by side: each has a client (a tenant) of its own, and none counts Redis commands.
  describe.concurrent('on every instance, before the change returns', () => {
    it('a removed client: its token is 401 on the other instances, near and far', async () => {
      const client = await makeClient(t.a.gateway.store, 'acme', ['orders:read']);
      const token = await clientToken(t.a.url, client);
      // Warm: accepted (so cached) everywhere.
      for (const gw of [t.a, t.b, t.slow]) expect((await tenantOn(gw, token)).status).toBe(200);
      expect(await t.a.gateway.store.clients.removeClient(client.clientId)).toEqual([]);
      const after = await Promise.all([t.b, t.slow, t.a].map((gw) => tenantOn(gw, token)));
      expect(after.map((res) => res.status)).toEqual([401, 401, 401]);
      expect((await clientCredentials(t.b.url, client)).status).toBe(401);
    }, 30_000);

    it('a rotated client: the old token is 401 everywhere, one issued with the new secret is good', async () => {
      const client = await makeClient(t.b.gateway.store, 'acme', ['orders:read']);
      const tokens = await Promise.all([
        clientToken(t.a.url, client),
        clientToken(t.slow.url, client),
      ]);
      for (const token of tokens)
        for (const gw of [t.a, t.b, t.slow]) expect((await tenantOn(gw, token)).status).toBe(200);
      const secret = newClientSecret();
      // Through the far instance: its confirmation waits for the near ones too.
      await t.slow.gateway.store.clients.rotateClientSecret(
        client.clientId,
        secretDigest(secret),
        1,
      );
      for (const token of tokens) {
        const after = await Promise.all([t.a, t.b, t.slow].map((gw) => tenantOn(gw, token)));
        expect(after.map((res) => res.status)).toEqual([401, 401, 401]);
      }
      const fresh = await clientToken(t.b.url, { ...client, clientSecret: secret });
      for (const gw of [t.a, t.b, t.slow]) expect((await tenantOn(gw, fresh)).status).toBe(200);
    }, 30_000);

    it('a removed tenant takes its clients and their tokens with it', async () => {
      const created = await t.a.gateway.store.tenants.upsertTenant(
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
      const client = await makeClient(t.a.gateway.store, 'initech', ['orders:read']);
      const token = await clientToken(t.a.url, client);
      for (const gw of [t.a, t.b, t.slow]) expect((await tenantOn(gw, token)).status).toBe(200);
      expect(await t.b.gateway.store.tenants.removeOrgTenant('initech')).toEqual([]);
      const after = await Promise.all([t.a, t.b, t.slow].map((gw) => tenantOn(gw, token)));
      expect(after.map((res) => res.status)).toEqual([401, 401, 401]);
    }, 30_000);
  });

  describe('an open WebSocket', () => {
    it('is closed 1008 on the other instance when its client is removed', async () => {
      const client = await makeClient(t.a.gateway.store, 'acme', ['orders:read']);
      const token = await clientToken(t.a.url, client);
      const closeCode = await openLiveSocket(t.slow, { authorization: bearer(token) });
      await t.a.gateway.store.clients.removeClient(client.clientId);
      expect(await closeCode()).toBe(1008);
    }, 30_000);
  });
});

/**
 * Issue 33, refresh tokens across instances: two gateways on one
 * redis-server in lease mode, and a third 200 ms from Redis through the
 * delaying relay. A stolen refresh token used on one instance after the
 * honest client rotated on another ends the family everywhere before the
 * 400 — the honest client's access token and successor are refused on the
 * other instance at once — and the audit event names the family, never the
 * token. 50 pairs of concurrent refreshes of one token split across two
 * instances end no family and give each pair one successor. A password
 * change or a removed membership ends the family on the other instance. The
 * proxied path makes no store call for a refreshed token. Issue 42: a family
 * a gateway before successor keys stored is ended at its next refresh (by a
 * token of its own, never by one made up for its public id).
 */
describe('a refresh token family ended', () => {
  // The reuse, RFC 7009 and session tests side by side: each on a family (a user) of its
  // own, its audit event found by the family's id; at most three of Alice's logins at once
  // on an instance (four may wait for its bcrypt pool). The rest, one at a time: the 50
  // pairs count every refresh.
  describe.concurrent('reuse ends the family on every instance before the answer', () => {
    for (const [honestOn, thiefOn] of [
      ['a', 'b'],
      ['a', 'slow'],
      ['slow', 'a'],
    ] as const) {
      it(`honest client on ${honestOn}, stolen token on ${thiefOn}`, async () => {
        const gw = { a: () => t.a, b: () => t.b, slow: () => t.slow };
        const honest = gw[honestOn]();
        const thief = gw[thiefOn]();
        const stolen = await login(honest);
        // The honest client rotates twice: the stolen token is used, past any grace.
        const second = await refreshed(honest, stolen.refresh_token);
        const third = await refreshed(honest, second.refresh_token);
        // Accepted (so cached) on the honest client's instance.
        expect((await tenantOn(honest, third.access_token)).status).toBe(200);

        const res = await refresh(thief, stolen.refresh_token);
        expect(res.status).toBe(400);
        expect(((await res.json()) as { error: string }).error).toBe('invalid_grant');
        const after = await Promise.all(
          [honest, thief].flatMap((g) => [
            tenantOn(g, third.access_token),
            tenantOn(g, second.access_token),
          ]),
        );
        expect(after.map((r) => r.status)).toEqual([401, 401, 401, 401]);
        expect((await refresh(honest, third.refresh_token)).status).toBe(400);

        const familyId = decodeJwt(stolen.access_token).fid as string;
        const log = t.a.gateway.store.auditLog({ maxEventsPerStream: 10_000 });
        const events = (await log.read('tenant:acme', 0)).map((e) => e.event);
        const reused = events.filter(
          (e) => e.includes('"refresh_token_reused"') && e.includes(familyId),
        );
        expect(reused).toHaveLength(1);
        expect(JSON.parse(reused[0] as string)).toMatchObject({
          event: 'refresh_token_reused',
          family_id: familyId,
          tenant_id: 'acme',
          user_id: decodeJwt(stolen.access_token).sub,
        });
        for (const token of [stolen, second, third].map((t) => t.refresh_token))
          expect(events.join('\n')).not.toContain(token.slice(31, 74));
      }, 30_000);
    }
  });

  it.concurrent(
    'RFC 7009 on the far instance: the family and its access tokens are refused on the near ones at once',
    async () => {
      const first = await login(t.a);
      const second = await refreshed(t.b, first.refresh_token);
      for (const gw of [t.a, t.b])
        expect((await tenantOn(gw, second.access_token)).status).toBe(200);
      const res = await fetch(`${t.slow.url}/1/oauth/revoke`, {
        method: 'POST',
        headers: FORM,
        body: new URLSearchParams({ token: second.refresh_token }).toString(),
      });
      expect(res.status).toBe(200);
      const after = await Promise.all([t.a, t.b].map((gw) => tenantOn(gw, second.access_token)));
      expect(after.map((r) => r.status)).toEqual([401, 401]);
      expect((await refresh(t.a, second.refresh_token)).status).toBe(400);
    },
    30_000,
  );

  describe.concurrent('a session ended on one instance ends the family on the others', () => {
    it('a password change', async () => {
      const user = { email: 'refresh-pw@example.com', password: 'refresh-password-1' };
      const created = await signUp(t.a.url, user);
      expect(created.status).toBe(201);
      const { user_id: id } = (await created.json()) as { user_id: string };
      await t.a.gateway.store.memberships.addMember('acme', id, 'member');
      const first = await login(t.b, user);
      const res = await changePassword(t.a.url, user, 'another-password-2');
      expect(res.status).toBe(204);
      for (const gw of [t.b, t.slow])
        expect((await refresh(gw, first.refresh_token)).status).toBe(400);
    }, 30_000);

    it('a membership removed', async () => {
      const user = { email: 'refresh-member@example.com', password: 'refresh-password-1' };
      const created = await signUp(t.a.url, user);
      const { user_id: id } = (await created.json()) as { user_id: string };
      await t.a.gateway.store.memberships.addMember('acme', id, 'member');
      const first = await login(t.slow, user);
      expect(await t.b.gateway.store.memberships.removeMember('acme', id)).toBe(true);
      for (const gw of [t.a, t.slow])
        expect((await refresh(gw, first.refresh_token)).status).toBe(400);
    }, 30_000);
  });

  it('a family stored before successor keys (issue 42) is ended at its next refresh by a token of its own: the user logs in again', async () => {
    const first = await login(t.a);
    const current = await refreshed(t.b, first.refresh_token);
    // The record as a gateway before issue 42 left it: no successor key.
    const [key] = await t.redis.keys(`*refresh:{${first.refresh_token.slice(4, 30)}}`);
    const record = JSON.parse((await t.redis.get(key!))!) as Record<string, unknown>;
    expect(record['successorKey']).toEqual(expect.any(String));
    delete record['successorKey'];
    await t.redis.set(key!, JSON.stringify({ ...record, used: [] }), 'KEEPTTL');
    // Ended by a token of its own only: one made up for its public id ends nothing.
    expect((await refresh(t.a, forgedFor(first.access_token))).status).toBe(400);
    expect((await tenantOn(t.b, current.access_token)).status).toBe(200);
    expect((await refresh(t.a, current.refresh_token)).status).toBe(400);
    expect((await tenantOn(t.b, current.access_token)).status).toBe(401);
    expect((await refresh(t.b, current.refresh_token)).status).toBe(400);
    expect((await refresh(t.b, (await login(t.b)).refresh_token)).status).toBe(200);
  }, 30_000);

  it('50 pairs of concurrent refreshes of one token, split across two instances: one successor each, no family ended', async () => {
    const outcomes = async (outcome: string) =>
      (
        await Promise.all(
          [t.a, t.b].map(async (gw) =>
            total(await scrape(gw.adminUrl as string), 'tenant_gateway_refreshes_total', {
              outcome,
            }),
          ),
        )
      ).reduce((x, y) => x + y, 0);
    const [rotatedBefore, graceBefore] = [await outcomes('rotated'), await outcomes('grace')];
    let token = (await login(t.a)).refresh_token;
    const successors = new Set<string>();
    for (let pair = 0; pair < 50; pair++) {
      const [onA, onB] = await Promise.all([refreshed(t.a, token), refreshed(t.b, token)]);
      expect(onA.refresh_token).toBe(onB.refresh_token);
      expect(successors.has(onA.refresh_token)).toBe(false);
      successors.add(onA.refresh_token);
      for (const answer of [onA, onB])
        expect((await tenantOn(t.b, answer.access_token)).status).toBe(200);
      token = onA.refresh_token;
    }
    // Each pair: one rotation, and the other refresh within the grace.
    expect((await outcomes('rotated')) - rotatedBefore).toBe(50);
    expect((await outcomes('grace')) - graceBefore).toBe(50);
    const family = await t.a.gateway.store.refresh.getRefreshFamily(token.slice(4, 30));
    expect(family?.revoked).toBe(false);
    expect((await refresh(t.b, token)).status).toBe(200);
  }, 60_000);

  it('a steady stream of proxied requests with a refreshed token makes no Redis call', async () => {
    const { access_token: token } = await refreshed(t.a, (await login(t.a)).refresh_token);
    const get = () =>
      fetch(`${t.b.url}/api/x`, {
        headers: { authorization: bearer(token), 'x-tenant-id': 'acme' },
      });
    expect((await get()).status).toBe(200); // warms b's caches
    await expectNoRedisCall(t.redis, get);
  }, 30_000);
});

/**
 * Issue 32, API keys across instances: two gateways on one redis-server in
 * lease mode, and a third 200 ms from Redis through the delaying relay. A
 * steady stream of requests with a key makes no Redis call (its last use is
 * written in the background); `curl` with a key is refused on every instance
 * as soon as the key's removal returns, through any of them; an open
 * WebSocket of the key is closed 1008; a wrong key costs the same store work
 * whichever of its parts is wrong.
 */
describe('an API key removed', () => {
  const run = promisify(execFile);
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tg-keys-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

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
    const { clientId } = await makeClient(t.a.gateway.store, 'acme', ['orders:read']);
    return { clientId, ...(await makeApiKey(t.a.gateway.store, clientId)) };
  }

  it('a steady stream of requests with a key makes no Redis call; its last use is written in the background', async () => {
    const key = await newKey();
    const get = () =>
      fetch(`${t.b.url}/api/x`, { headers: { 'x-api-key': key.apiKey, 'x-tenant-id': 'acme' } });
    expect((await get()).status).toBe(200); // warms b's cache
    // The last use, written within the flush interval (10 s), not by the request.
    const deadline = Date.now() + 15_000;
    let lastUsedAt: number | undefined;
    while (lastUsedAt === undefined && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      lastUsedAt = (await t.a.gateway.store.apiKeys.getApiKey(key.keyId))?.lastUsedAt;
    }
    expect(lastUsedAt).toBeGreaterThan(Date.now() / 1000 - 30);
    await expectNoRedisCall(t.redis, get);
  }, 40_000);

  // Side by side: each with a client and keys of its own; only the last opens a WebSocket.
  describe.concurrent('a removed key, on every instance before the removal returns', () => {
    it('curl with it: 200 everywhere, then 401 everywhere, near and far', async () => {
      const key = await newKey();
      for (const gw of [t.a, t.b, t.slow]) expect(await curl(gw, key.apiKey)).toBe(200);
      // Through the far instance: its confirmation waits for the near ones too.
      expect(await t.slow.gateway.store.apiKeys.removeApiKey(key.clientId, key.keyId)).toBe(true);
      const after = await Promise.all([t.a, t.b, t.slow].map((gw) => curl(gw, key.apiKey)));
      expect(after).toEqual([401, 401, 401]);
    }, 30_000);

    it('the same through the near instance, and with its client removed', async () => {
      const key = await newKey();
      const sibling = await makeApiKey(t.a.gateway.store, key.clientId);
      for (const k of [key.apiKey, sibling.apiKey])
        for (const gw of [t.a, t.b, t.slow]) expect(await curl(gw, k)).toBe(200);
      expect(await t.a.gateway.store.apiKeys.removeApiKey(key.clientId, key.keyId)).toBe(true);
      expect(await Promise.all([t.b, t.slow].map((gw) => curl(gw, key.apiKey)))).toEqual([
        401, 401,
      ]);
      expect(await Promise.all([t.b, t.slow].map((gw) => curl(gw, sibling.apiKey)))).toEqual([
        200, 200,
      ]);
      expect(await t.b.gateway.store.clients.removeClient(key.clientId)).toEqual([sibling.keyId]);
      expect(await Promise.all([t.a, t.slow].map((gw) => curl(gw, sibling.apiKey)))).toEqual([
        401, 401,
      ]);
    }, 30_000);

    it('an open WebSocket of the key is closed 1008 on the far instance', async () => {
      const key = await newKey();
      const closeCode = await openLiveSocket(t.slow, { 'x-api-key': key.apiKey });
      expect(live.upgrades.at(-1)?.['x-api-key']).toBeUndefined();
      expect(live.upgrades.at(-1)?.['x-client-id']).toBe(key.clientId);
      await t.a.gateway.store.apiKeys.removeApiKey(key.clientId, key.keyId);
      expect(await closeCode()).toBe(1008);
    }, 30_000);
  });

  it('a wrong key costs the same store work whichever part is wrong (no timing oracle)', async () => {
    const key = await newKey();
    const wrongSecret = forgedApiKey(key.apiKey, 40); // the right key id, checksum made right
    const wrongId = forgedApiKey(key.apiKey, 10); // another key id, checksum made right
    const costs = [];
    for (const k of [wrongSecret, wrongId]) {
      // The check's own commands: a last-use flush of the instances (a script
      // on a 10 s timer) may fall in the window, and is not the check's work.
      const calls = await plainCommandsDuring(t.redis, async () => {
        const res = await fetch(`${t.b.url}/api/x`, {
          headers: { 'x-api-key': k, 'x-tenant-id': 'acme' },
        });
        expect(res.status).toBe(401);
        expect(await res.json()).toMatchObject({ error: 'invalid_token' });
      });
      costs.push(calls.length);
    }
    // One read of the key each, and no more.
    expect(costs).toEqual([1, 1]);
  }, 30_000);
});

/**
 * Issue 42, against the built process on each store (in-memory, and Redis
 * whose rotation is a Lua script): a family id is public — every access token
 * carries it as `fid`, and upstreams see access tokens — and a refresh
 * token's checksum is a public CRC, so anyone who saw an access token of a
 * family (expired or not) builds a well-formed refresh token for it. Such a
 * token is refused (400 invalid_grant) and ends nothing: the user's current
 * refresh token still rotates and their access token still works. A real
 * token the family used before is still reuse, and ends the family.
 */
describe('a refresh token forged from a family id', () => {
  const STORES = {
    memory: () => '',
    redis: () => `store: { redis: { url: "${server.url}", keyPrefix: "${uniquePrefix()}" } }`,
  };

  const configText = (store: string) => `
listen: { host: 127.0.0.1, port: 0 }
${store}
seed: ./seed.yaml
passwords: { bcryptCost: 4 }
tokens: { keys: ./keys, ttlSeconds: 600, refresh: { enabled: true } }
`;

  describe.each(Object.keys(STORES) as (keyof typeof STORES)[])('on the %s store', (store) => {
    let gw: GatewayProcess;
    beforeAll(async () => {
      gw = await startGatewayProcess(configText(STORES[store]()), {
        files: { 'seed.yaml': SEED_YAML, ...signingKeyFile() },
      });
    });

    it('a refresh token forged from an access token’s fid is 400 invalid_grant and ends nothing', async () => {
      const first = await login(gw, OPERATOR, TENANT);
      const current = await refreshed(gw, first.refresh_token);
      // The first access token is enough (an upstream saw it); its fid is the family's.
      expect(decodeJwt(current.access_token).fid).toBe(decodeJwt(first.access_token).fid);
      for (let i = 0; i < 3; i++) {
        const forged = forgedFor(first.access_token);
        expect(forged).toMatch(/^tgr_[a-z2-7]{26}_[A-Za-z0-9_-]{43}_[0-9A-Za-z]{6}$/);
        await expectError(await refresh(gw, forged), 400, 'invalid_grant');
      }
      // The user's session goes on: their access token works, their refresh token rotates.
      expect((await tenantOn(gw, current.access_token)).status).toBe(200);
      const next = await refreshed(gw, current.refresh_token);
      expect((await tenantOn(gw, current.access_token)).status).toBe(200);
      expect((await tenantOn(gw, next.access_token)).status).toBe(200);
      expect((await refresh(gw, next.refresh_token)).status).toBe(200);
    });

    it('a real token the family used before is still reuse: the family and its access tokens end', async () => {
      const first = await login(gw, OPERATOR, TENANT);
      const second = await refreshed(gw, first.refresh_token);
      const current = await refreshed(gw, second.refresh_token);
      await expectError(await refresh(gw, forgedFor(first.access_token)), 400, 'invalid_grant');
      expect((await tenantOn(gw, current.access_token)).status).toBe(200);
      // The stolen first token, two rotations back: remembered as used.
      await expectError(await refresh(gw, first.refresh_token), 400, 'invalid_grant');
      expect((await tenantOn(gw, current.access_token)).status).toBe(401);
      await expectError(await refresh(gw, current.refresh_token), 400, 'invalid_grant');
    });
  });
});
