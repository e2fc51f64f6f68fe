/**
 * Revocation across hosts (lease mode, the default): after the 204 of a
 * logout, no instance accepts the token, whatever its link to Redis — one
 * instance's Redis connections go through a relay adding 200 ms each way,
 * another's are cut (held, as a partition holds them), a third loses only
 * its event subscription. Plain mode on the same links accepts the old
 * token on the slow instance: the thing lease mode is for.
 */
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayBehind, waitUntilTrusted } from '../support/gateway-behind.js';
import { adminUrlOf, bearer, type TestGateway } from '../support/gateway.js';
import {
  BOB,
  startIdentityFixture,
  tokenFor,
  type RedisIdentityFixture,
} from '../support/identity-fixture.js';
import { scrape, total } from '../support/prometheus-text.js';
import { startTcpRelay, type TcpRelay } from '../support/tcp-relay.js';

const LEASE_MS = 2000;
const ONE_WAY_DELAY_MS = 200;

const tenantOn = (gw: TestGateway, token: string) =>
  fetch(`${gw.url}/1/tenants/current`, { headers: { authorization: bearer(token) } });

const logout = (gw: TestGateway, token: string) =>
  fetch(`${gw.url}/1/token`, { method: 'DELETE', headers: { authorization: bearer(token) } });

const startBehind = (fx: RedisIdentityFixture, relay: TcpRelay) => startGatewayBehind(fx, relay);

/** `count` tokens of one user, issued one at a time (logins in progress per account are capped). */
async function issue(gw: TestGateway, count: number): Promise<string[]> {
  const tokens: string[] = [];
  while (tokens.length < count) tokens.push((await tokenFor(gw.url, BOB, 'acme')).access_token);
  return tokens;
}

/**
 * `token` warmed (accepted, so cached) on every instance of `checked`; logout
 * on `revoker`; then one request to each checked instance. Returns how many
 * of those accepted the token, and the logout's time.
 */
async function pair(token: string, revoker: TestGateway, checked: readonly TestGateway[]) {
  for (const gw of checked) expect((await tenantOn(gw, token)).status).toBe(200);
  const started = performance.now();
  const answer = await logout(revoker, token);
  const ms = performance.now() - started;
  expect(answer.status).toBe(204);
  const after = await Promise.all(checked.map((gw) => tenantOn(gw, token)));
  return { accepted: after.filter((res) => res.status === 200).length, ms };
}

/** One pair per token, `parallel` at a time. */
async function pairs(
  tokens: readonly string[],
  parallel: number,
  run: (token: string) => ReturnType<typeof pair>,
) {
  const results: Awaited<ReturnType<typeof pair>>[] = [];
  const queue = [...tokens];
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      for (let token = queue.shift(); token !== undefined; token = queue.shift())
        results.push(await run(token));
    }),
  );
  return results;
}

/**
 * The block's fixture (its revocation settings `revocation`), `a` its first
 * instance (trusted first, when asked), and `slow` an instance of it whose
 * Redis is ONE_WAY_DELAY_MS away from the end of its start (it starts on
 * the undelayed relay).
 */
function useSlowInstance(revocation: Record<string, unknown>, trusted = false) {
  const t = {} as { fx: RedisIdentityFixture; a: TestGateway; relay: TcpRelay; slow: TestGateway };
  beforeAll(async () => {
    t.fx = await startIdentityFixture({ revocation });
    t.a = t.fx.gw;
    if (trusted) await waitUntilTrusted(t.a);
    t.relay = await startTcpRelay(t.fx.redis.port);
    // A far but healthy instance: its link's 400 ms round trip, not a starved test
    // worker's relay, is the subject, so its commands may take longer than the 1 s default
    // (CI once saw a logout on it answer 503 with the machine loaded).
    t.slow = await startGatewayBehind(t.fx, t.relay, { redis: { commandTimeoutMs: 3000 } });
    // Moved far once started: its start (connections, subscription, lease) took ~3 s
    // across the round trip and is no test's subject; all the tests do with it crosses it.
    t.relay.setDelay(ONE_WAY_DELAY_MS);
  }, 60_000);
  afterAll(async () => {
    await t.slow?.close();
    await t.relay?.close();
    await t.fx?.close();
  });
  return t;
}

describe('lease mode', () => {
  const t = useSlowInstance({ mode: 'lease', leaseMs: LEASE_MS }, true);

  // The two tests of pairs side by side: each on tokens of its own, and neither counts
  // fenced confirmations (the cut-off and stopped instances below come after them, alone).
  it.concurrent(
    'after the 204 of a logout no instance accepts the token, one of them 200 ms from Redis',
    async () => {
      const results = await pairs(await issue(t.a, 200), 20, (token) =>
        pair(token, t.a, [t.a, t.slow]),
      );
      expect(results).toHaveLength(200);
      expect(results.reduce((sum, r) => sum + r.accepted, 0)).toBe(0);
      // The 204 waited for the slow instance's acknowledgement: at least its round trip.
      const fastest = Math.min(...results.map((r) => r.ms));
      expect(fastest).toBeGreaterThanOrEqual(2 * ONE_WAY_DELAY_MS);
    },
    120_000,
  );

  it.concurrent(
    'the slow instance revoking holds too',
    async () => {
      const results = await pairs(await issue(t.a, 20), 10, (token) =>
        pair(token, t.slow, [t.a, t.slow]),
      );
      expect(results.reduce((sum, r) => sum + r.accepted, 0)).toBe(0);
    },
    60_000,
  );

  it('a cut-off instance refuses once its lease ends, and a revocation waits at most 1.5 leases for it', async () => {
    const relay = await startTcpRelay(t.fx.redis.port);
    const isolated = await startBehind(t.fx, relay);
    try {
      const { access_token: revoked } = await tokenFor(t.a.url, BOB, 'acme');
      const { access_token: kept } = await tokenFor(t.a.url, BOB, 'globex');
      for (const token of [revoked, kept])
        expect((await tenantOn(isolated, token)).status).toBe(200);
      relay.blackhole(true);
      const started = performance.now();
      expect((await logout(t.a, revoked)).status).toBe(204);
      // Bounded by 1.5 leases; the rest is slack for a loaded machine.
      expect(performance.now() - started).toBeLessThan(1.5 * LEASE_MS + 3000);
      // Past its lease the instance reads the store, which it cannot reach: 503, never 200.
      expect((await tenantOn(isolated, revoked)).status).toBe(503);
      expect((await tenantOn(isolated, kept)).status).toBe(503);
      relay.blackhole(false);
      // Healed: a new lease, an emptied cache, and the kept token good again.
      await waitUntilTrusted(isolated);
      expect((await tenantOn(isolated, kept)).status).toBe(200);
      expect((await tenantOn(isolated, revoked)).status).toBe(401);
    } finally {
      relay.blackhole(false);
      await isolated.close();
      await relay.close();
    }
  }, 60_000);

  it('a stopped instance gives its lease up: revocations do not wait for it', async () => {
    const relay = await startTcpRelay(t.fx.redis.port);
    const leaving = await startBehind(t.fx, relay);
    await leaving.close();
    await relay.close();
    const before = total(
      await scrape(adminUrlOf(t.a)),
      'tenant_gateway_revocation_confirm_seconds_count',
      {
        fenced: 'true',
      },
    );
    const { access_token: token } = await tokenFor(t.a.url, BOB, 'acme');
    expect((await logout(t.a, token)).status).toBe(204);
    const after = total(
      await scrape(adminUrlOf(t.a)),
      'tenant_gateway_revocation_confirm_seconds_count',
      {
        fenced: 'true',
      },
    );
    expect(after).toBe(before);
  }, 60_000);
});

/**
 * A short lease, so that the 204 comes before the deaf instance's own
 * heartbeat could notice its subscription is gone (1–2 s): only the fence
 * stops it answering from its cache.
 */
describe('lease mode, an instance deaf to events', () => {
  let fx: RedisIdentityFixture;
  beforeAll(async () => {
    fx = await startIdentityFixture({ revocation: { mode: 'lease', leaseMs: 300 } });
    await waitUntilTrusted(fx.gw);
  }, 60_000);
  afterAll(() => fx?.close());

  it('an instance that stops hearing events is fenced: the 204 waits out its lease, then it refuses', async () => {
    const relay = await startTcpRelay(fx.redis.port);
    const deaf = await startBehind(fx, relay);
    try {
      const { access_token: token } = await tokenFor(fx.gw.url, BOB, 'acme');
      expect((await tenantOn(deaf, token)).status).toBe(200);
      // Its first connection carries commands (lease renewals go on); the second, its subscription.
      expect(relay.links.length).toBeGreaterThanOrEqual(2);
      relay.links[1]?.blackhole(true);
      const before = total(
        await scrape(adminUrlOf(fx.gw)),
        'tenant_gateway_revocation_confirm_seconds_count',
        {
          fenced: 'true',
        },
      );
      expect((await logout(fx.gw, token)).status).toBe(204);
      expect((await tenantOn(deaf, token)).status).toBe(401);
      const after = total(
        await scrape(adminUrlOf(fx.gw)),
        'tenant_gateway_revocation_confirm_seconds_count',
        {
          fenced: 'true',
        },
      );
      expect(after).toBe(before + 1);
    } finally {
      relay.blackhole(false);
      await deaf.close();
      await relay.close();
    }
  }, 60_000);
});

describe('plain mode, the same links', () => {
  const t = useSlowInstance({ mode: 'plain' });

  it('the slow instance accepts the old token after the 204 (what lease mode prevents)', async () => {
    const results = await pairs(await issue(t.fx.gw, 20), 10, (token) =>
      pair(token, t.fx.gw, [t.slow]),
    );
    expect(results.reduce((sum, r) => sum + r.accepted, 0)).toBeGreaterThan(0);
    // And the instance does catch up: once the event has crossed the link, refused.
    const { access_token: token } = await tokenFor(t.fx.gw.url, BOB, 'acme');
    expect((await tenantOn(t.slow, token)).status).toBe(200);
    expect((await logout(t.fx.gw, token)).status).toBe(204);
    await new Promise((resolve) => setTimeout(resolve, 4 * ONE_WAY_DELAY_MS));
    expect((await tenantOn(t.slow, token)).status).toBe(401);
  }, 60_000);
});
