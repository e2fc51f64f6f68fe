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
import { randomBytes } from 'node:crypto';
import { decodeJwt } from 'jose';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checksum } from '../../src/auth/secrets.js';
import { startGatewayBehind, waitUntilTrusted } from '../support/gateway-behind.js';
import { basic, bearer, type TestGateway } from '../support/gateway.js';
import {
  ALICE,
  startIdentityFixture,
  type RedisIdentityFixture,
} from '../support/identity-fixture.js';
import { scrape, total } from '../support/prometheus-text.js';
import { commandsDuring, leaseRenewals } from '../support/redis-commands.js';
import { startTcpRelay, type TcpRelay } from '../support/tcp-relay.js';
import { startEchoUpstream, type Upstream } from '../support/upstream.js';

const LEASE_MS = 2000;

let fx: RedisIdentityFixture;
let a: TestGateway;
let b: TestGateway;
let relay: TcpRelay;
let slow: TestGateway;
let echo: Upstream;

beforeAll(async () => {
  echo = await startEchoUpstream();
  fx = await startIdentityFixture({
    revocation: { mode: 'lease', leaseMs: LEASE_MS },
    routes: [{ prefix: '/api', upstream: echo.url }],
    tokens: { refresh: { enabled: true } },
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
  await echo?.close();
});

interface TokenAnswer {
  access_token: string;
  refresh_token: string;
}

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const refresh = (gw: TestGateway, token: string) =>
  fetch(`${gw.url}/1/oauth/token`, {
    method: 'POST',
    headers: FORM,
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token }).toString(),
  });
const tenantOn = (gw: TestGateway, token: string) =>
  fetch(`${gw.url}/1/tenants/current`, { headers: { authorization: bearer(token) } });

async function login(gw: TestGateway, user = ALICE): Promise<TokenAnswer> {
  const res = await fetch(`${gw.url}/1/token?tenant_id=acme`, {
    headers: { authorization: basic(user.email, user.password) },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as TokenAnswer;
}

async function refreshed(gw: TestGateway, token: string): Promise<TokenAnswer> {
  const res = await refresh(gw, token);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as TokenAnswer;
}

describe('reuse ends the family on every instance before the answer', () => {
  for (const [honestOn, thiefOn] of [
    ['a', 'b'],
    ['a', 'slow'],
    ['slow', 'a'],
  ] as const) {
    it(`honest client on ${honestOn}, stolen token on ${thiefOn}`, async () => {
      const gw = { a: () => a, b: () => b, slow: () => slow };
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
      const log = a.gateway.store.auditLog({ maxEventsPerStream: 10_000 });
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

it('RFC 7009 on the far instance: the family and its access tokens are refused on the near ones at once', async () => {
  const first = await login(a);
  const second = await refreshed(b, first.refresh_token);
  for (const gw of [a, b]) expect((await tenantOn(gw, second.access_token)).status).toBe(200);
  const res = await fetch(`${slow.url}/1/oauth/revoke`, {
    method: 'POST',
    headers: FORM,
    body: new URLSearchParams({ token: second.refresh_token }).toString(),
  });
  expect(res.status).toBe(200);
  const after = await Promise.all([a, b].map((gw) => tenantOn(gw, second.access_token)));
  expect(after.map((r) => r.status)).toEqual([401, 401]);
  expect((await refresh(a, second.refresh_token)).status).toBe(400);
}, 30_000);

it('50 pairs of concurrent refreshes of one token, split across two instances: one successor each, no family ended', async () => {
  const outcomes = async (outcome: string) =>
    (
      await Promise.all(
        [a, b].map(async (gw) =>
          total(await scrape(gw.adminUrl as string), 'tenant_gateway_refreshes_total', { outcome }),
        ),
      )
    ).reduce((x, y) => x + y, 0);
  const [rotatedBefore, graceBefore] = [await outcomes('rotated'), await outcomes('grace')];
  let token = (await login(a)).refresh_token;
  const successors = new Set<string>();
  for (let pair = 0; pair < 50; pair++) {
    const [onA, onB] = await Promise.all([refreshed(a, token), refreshed(b, token)]);
    expect(onA.refresh_token).toBe(onB.refresh_token);
    expect(successors.has(onA.refresh_token)).toBe(false);
    successors.add(onA.refresh_token);
    for (const answer of [onA, onB])
      expect((await tenantOn(b, answer.access_token)).status).toBe(200);
    token = onA.refresh_token;
  }
  // Each pair: one rotation, and the other refresh within the grace.
  expect((await outcomes('rotated')) - rotatedBefore).toBe(50);
  expect((await outcomes('grace')) - graceBefore).toBe(50);
  const family = await a.gateway.store.refresh.getRefreshFamily(token.slice(4, 30));
  expect(family?.revoked).toBe(false);
  expect((await refresh(b, token)).status).toBe(200);
}, 60_000);

describe('a session ended on one instance ends the family on the others', () => {
  it('a password change', async () => {
    const user = { email: 'refresh-pw@example.com', password: 'refresh-password-1' };
    const created = await fetch(`${a.url}/1/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(user),
    });
    expect(created.status).toBe(201);
    const { user_id: id } = (await created.json()) as { user_id: string };
    await a.gateway.store.memberships.addMember('acme', id, 'member');
    const first = await login(b, user);
    const res = await fetch(`${a.url}/1/users/current/password`, {
      method: 'PUT',
      headers: {
        authorization: basic(user.email, user.password),
        'content-type': 'application/json',
      },
      body: JSON.stringify({ password: 'another-password-2' }),
    });
    expect(res.status).toBe(204);
    for (const gw of [b, slow]) expect((await refresh(gw, first.refresh_token)).status).toBe(400);
  }, 30_000);

  it('a membership removed', async () => {
    const user = { email: 'refresh-member@example.com', password: 'refresh-password-1' };
    const created = await fetch(`${a.url}/1/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(user),
    });
    const { user_id: id } = (await created.json()) as { user_id: string };
    await a.gateway.store.memberships.addMember('acme', id, 'member');
    const first = await login(slow, user);
    expect(await b.gateway.store.memberships.removeMember('acme', id)).toBe(true);
    for (const gw of [a, slow]) expect((await refresh(gw, first.refresh_token)).status).toBe(400);
  }, 30_000);
});

it('a family stored before successor keys (issue 42) is ended at its next refresh by a token of its own: the user logs in again', async () => {
  const first = await login(a);
  const current = await refreshed(b, first.refresh_token);
  const redis = new Redis(fx.redis.url);
  try {
    // The record as a gateway before issue 42 left it: no successor key.
    const [key] = await redis.keys(`*refresh:{${first.refresh_token.slice(4, 30)}}`);
    const record = JSON.parse((await redis.get(key!))!) as Record<string, unknown>;
    expect(record['successorKey']).toEqual(expect.any(String));
    delete record['successorKey'];
    await redis.set(key!, JSON.stringify({ ...record, used: [] }), 'KEEPTTL');
  } finally {
    redis.disconnect();
  }
  // Ended by a token of its own only: one made up for its public id ends nothing.
  const body = `tgr_${decodeJwt(first.access_token).fid}_${randomBytes(32).toString('base64url')}`;
  expect((await refresh(a, `${body}_${checksum(body)}`)).status).toBe(400);
  expect((await tenantOn(b, current.access_token)).status).toBe(200);
  expect((await refresh(a, current.refresh_token)).status).toBe(400);
  expect((await tenantOn(b, current.access_token)).status).toBe(401);
  expect((await refresh(b, current.refresh_token)).status).toBe(400);
  expect((await refresh(b, (await login(b)).refresh_token)).status).toBe(200);
}, 30_000);

it('a steady stream of proxied requests with a refreshed token makes no Redis call', async () => {
  const { access_token: token } = await refreshed(a, (await login(a)).refresh_token);
  const get = () =>
    fetch(`${b.url}/api/x`, { headers: { authorization: bearer(token), 'x-tenant-id': 'acme' } });
  expect((await get()).status).toBe(200); // warms b's caches
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
}, 30_000);
