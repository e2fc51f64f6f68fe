/**
 * The store failing under a running gateway: a record it cannot read (500,
 * naming nothing), the one Redis down and back (503 promptly, fail closed),
 * and a failover on Sentinel and on Cluster — during traffic, and in the
 * middle of a refresh token's rotation. The first two share one
 * redis-server; each failover block starts its own topology.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFRESH_GRACE_SECONDS } from '../../src/auth/refresh/refresh-grant.js';
import { expectError } from '../support/expect-error.js';
import { basic, bearer, uniquePrefix, type TestGateway } from '../support/gateway.js';
import {
  ALICE,
  BOB,
  startIdentityFixtureOn,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
  type RedisIdentityFixture,
} from '../support/identity-fixture.js';
import { startRedisServer, type TestRedisServer } from '../support/redis-server.js';
import { startCluster, startSentinelSet } from '../support/redis-topologies.js';
import { startEchoUpstream, type CountingUpstream } from '../support/upstream.js';
import { refreshAt, signUp } from '../support/account-requests.js';

let server: TestRedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(() => server?.stop());

/**
 * A store topology a failover runs on: its `store.redis` keys, how to kill
 * the master holding a key (Sentinel: its one master), and how to stop it.
 */
interface Topology {
  redis: Record<string, unknown>;
  killMasterOf(key: string): Promise<{ oldPort: number; newPort: number }>;
  stop(): Promise<void>;
}

const topologies: [string, () => Promise<Topology>][] = [
  [
    'Sentinel',
    async () => {
      const sentinel = await startSentinelSet();
      return {
        redis: { sentinel: { name: sentinel.name, nodes: sentinel.sentinels } },
        killMasterOf: () => sentinel.killMaster(),
        stop: () => sentinel.stop(),
      };
    },
  ],
  [
    'Cluster',
    async () => {
      const cluster = await startCluster();
      return {
        redis: { cluster: { nodes: cluster.nodes } },
        killMasterOf: (key) => cluster.killMasterOf(key),
        stop: () => cluster.stop(),
      };
    },
  ],
];

/**
 * Two gateways on `topology` under a new key prefix (the memory fixture's
 * seed and keys, its store replaced), with command timeouts short enough to
 * answer 503 promptly between masters.
 */
async function onTopology(
  topology: Topology,
  overrides: Record<string, unknown>,
): Promise<{ fx: IdentityFixture; keyPrefix: string; a: TestGateway; b: TestGateway }> {
  const keyPrefix = uniquePrefix();
  const fx = await startMemoryIdentityFixture({
    store: {
      redis: { ...topology.redis, keyPrefix, commandTimeoutMs: 500, connectTimeoutMs: 5000 },
    },
    ...overrides,
  });
  return { fx, keyPrefix, a: fx.gw, b: await fx.startAnother() };
}

/**
 * A bug or a corrupt record is a 500 `internal_error` in the one JSON shape,
 * with a description that says nothing about the cause (the log has it), and
 * the gateway goes on serving. A tenant record edited by hand into a type the
 * gateway does not know stands in for the bug: the store refuses to guess.
 */
describe('a record the store cannot read', () => {
  let fx: RedisIdentityFixture;
  let redis: Redis;

  beforeAll(async () => {
    fx = await startIdentityFixtureOn(server);
    redis = new Redis(fx.redis.url, { lazyConnect: true });
    await redis.connect();
  });
  afterAll(async () => {
    redis.disconnect();
    await fx.close();
  });

  const token = () =>
    fetch(`${fx.gw.url}/1/token?tenant_id=acme`, {
      headers: { authorization: basic(ALICE.email, ALICE.password) },
    });

  it('a malformed record: 500 internal_error that names no content, then service as before', async () => {
    expect((await token()).status).toBe(200);
    const prefix = (fx.config.store as { redis: { keyPrefix: string } }).redis.keyPrefix;
    const key = `${prefix}{dir}:tenant:acme`;
    expect(await redis.hget(key, 'type')).toBe('orgtenant');

    await redis.hset(key, 'type', 'secret-looking-value');
    const body = await expectError(await token(), 500, 'internal_error');
    expect(JSON.stringify(body)).not.toContain('secret-looking-value');

    await redis.hset(key, 'type', 'orgtenant');
    expect((await token()).status).toBe(200);
  });
});

/**
 * Fail closed: with the store unreachable, nobody is let in on a guess. Every
 * endpoint that needs the store answers 503 `unavailable` promptly (no hang),
 * and service resumes when Redis is back.
 */
describe('the store down', () => {
  let fx: RedisIdentityFixture;
  beforeAll(async () => {
    fx = await startIdentityFixtureOn(server);
  });
  afterAll(() => fx.close());

  it('answers 503 unavailable while Redis is down, and recovers when it is back', async () => {
    const url = fx.gw.url;
    const { access_token } = await tokenFor(url, ALICE, 'acme');
    await fx.redis.kill();

    const started = Date.now();
    await expectError(
      await fetch(`${url}/1/token?tenant_id=acme`, {
        headers: { authorization: basic(ALICE.email, ALICE.password) },
      }),
      503,
      'unavailable',
    );
    await expectError(
      await fetch(`${url}/1/tenants/current`, { headers: { authorization: bearer(access_token) } }),
      503,
      'unavailable',
    );
    expect(Date.now() - started).toBeLessThan(5000);
    // The JWKS needs no store and keeps serving.
    expect((await fetch(`${url}/.well-known/jwks.json`)).status).toBe(200);

    await fx.redis.restart();
    // The restarted server is empty (no persistence): the old token's user is
    // gone, so the token is refused, not let in.
    let status = 0;
    for (let i = 0; i < 50 && (status === 0 || status === 503); i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = (
        await fetch(`${url}/1/tenants/current`, {
          headers: { authorization: bearer(access_token) },
        })
      ).status;
    }
    expect(status).toBe(401);
  });
});

/**
 * Issue 14: a failover during traffic, on Sentinel and on Cluster. Two
 * gateways share the store; its master (Cluster: the master of the
 * directory's slot) is killed while logins, proxied requests and refused
 * tokens keep coming. What must hold: no 500,
 * no request hanging, only 503 `unavailable` while there is no master, no
 * revoked or old-password token accepted at any moment, nothing written
 * before the kill lost, and both gateways recovering by themselves.
 */
describe('a failover during traffic', () => {
  /** Longer than any answer may take: the command timeout is 500 ms. */
  const HANG_MS = 5000;

  interface Answer {
    status: number;
    error?: string;
    ms: number;
  }

  async function call(url: string, init: RequestInit = {}): Promise<Answer> {
    const started = Date.now();
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(HANG_MS) });
    const text = await res.text();
    let error: string | undefined;
    try {
      error = (JSON.parse(text) as { error?: string }).error;
    } catch {
      // an upstream echo, not an error
    }
    return {
      status: res.status,
      ...(error === undefined ? {} : { error }),
      ms: Date.now() - started,
    };
  }

  const proxied = (gw: TestGateway, token: string) =>
    call(`${gw.url}/orders/1`, { headers: { authorization: bearer(token) } });

  describe.each(topologies)('a %s failover during traffic', (_name, startTopology) => {
    let topology: Topology;
    let upstream: CountingUpstream;
    let fx: IdentityFixture;
    let gws: TestGateway[];
    let keyPrefix: string;

    beforeAll(async () => {
      [topology, upstream] = await Promise.all([startTopology(), startEchoUpstream()]);
      const started = await onTopology(topology, {
        routes: [{ prefix: '/orders', upstream: upstream.url }],
        // The wrong-password loop below must not lock Alice out of her new password.
        limits: {
          login: { perEmail: 100_000, perIp: 100_000, maxQueuedPerEmail: 100, maxQueuedPerIp: 100 },
        },
      });
      ({ fx, keyPrefix } = started);
      gws = [started.a, started.b];
    }, 60_000);

    afterAll(async () => {
      await fx?.close();
      await upstream?.close();
      await topology?.stop();
    });

    it('answers 503 at worst, never accepts a refused token, loses nothing, and recovers', async () => {
      const [a, b] = gws as [TestGateway, TestGateway];
      // Before the kill: a logout, a password change and a signup, each acknowledged.
      const loggedOut = (await tokenFor(a.url, BOB, 'globex')).access_token;
      expect(
        (
          await call(`${a.url}/1/token`, {
            method: 'DELETE',
            headers: { authorization: bearer(loggedOut) },
          })
        ).status,
      ).toBe(204);
      const oldPassword = (await tokenFor(b.url, ALICE, 'acme')).access_token;
      const alice = (await fetch(`${a.url}/1/token?tenant_id=acme`, {
        headers: { authorization: basic(ALICE.email, ALICE.password) },
      }).then((r) => r.json())) as { access_token: string };
      const aliceId = (
        JSON.parse(
          Buffer.from(alice.access_token.split('.')[1] as string, 'base64url').toString(),
        ) as { sub: string }
      ).sub;
      const newPassword = 'alice-password-2';
      expect(
        (
          await call(`${b.url}/1/users/${aliceId}/password`, {
            method: 'PUT',
            headers: {
              authorization: basic(ALICE.email, ALICE.password),
              'content-type': 'application/json',
            },
            body: JSON.stringify({ password: newPassword }),
          })
        ).status,
      ).toBe(204);
      const carol = { email: 'carol@example.com', password: 'carol-password-1' };
      const signup = await signUp(a.url, carol);
      expect(signup.status).toBe(201);
      const carolTenant = ((await signup.json()) as { tenant_id: string }).tenant_id;
      const good = (await tokenFor(a.url, BOB, 'globex')).access_token;

      // Traffic on both gateways while the master dies and a replica takes over.
      const answers: { kind: string; answer: Answer }[] = [];
      let running = true;
      const loop = async (kind: string, request: () => Promise<Answer>) => {
        while (running) {
          answers.push({ kind, answer: await request() });
          await new Promise((r) => setTimeout(r, 20));
        }
      };
      const traffic = gws.flatMap((gw) => [
        loop('good', () => proxied(gw, good)),
        loop('logged-out', () => proxied(gw, loggedOut)),
        loop('old-password', () => proxied(gw, oldPassword)),
        loop('login', () =>
          call(`${gw.url}/1/token?tenant_id=globex`, {
            headers: { authorization: basic(BOB.email, BOB.password) },
          }),
        ),
        loop('old-password-login', () =>
          call(`${gw.url}/1/token?tenant_id=acme`, {
            headers: { authorization: basic(ALICE.email, ALICE.password) },
          }),
        ),
      ]);
      await new Promise((r) => setTimeout(r, 300));
      const { oldPort, newPort } = await topology.killMasterOf(`${keyPrefix}{dir}:users`);
      expect(newPort).not.toBe(oldPort);

      // A logout during the failover: retried until the store takes it.
      const duringFailover = (await tokenFor(a.url, BOB, 'globex').catch(() => undefined))
        ?.access_token;
      let revoked: string | undefined;
      await waitForAsync(async () => {
        const token =
          duringFailover ??
          (await tokenFor(a.url, BOB, 'globex').catch(() => undefined))?.access_token;
        if (token === undefined) return false;
        const res = await call(`${a.url}/1/token`, {
          method: 'DELETE',
          headers: { authorization: bearer(token) },
        });
        if (res.status === 204) revoked = token;
        return res.status === 204;
      }, 20_000);
      const revokedAt = answers.length;
      traffic.push(
        ...gws.map((gw) => loop('revoked-during', () => proxied(gw, revoked as string))),
      );

      // Both gateways serve again by themselves, the store included (a login reads it).
      for (const gw of gws) {
        await waitForAsync(async () => {
          const login = await call(`${gw.url}/1/token?tenant_id=globex`, {
            headers: { authorization: basic(BOB.email, BOB.password) },
          });
          const proxy = await proxied(gw, good);
          return login.status === 200 && proxy.status === 200;
        }, 20_000);
      }
      await new Promise((r) => setTimeout(r, 500));
      running = false;
      await Promise.all(traffic);

      const statuses = (kind: string) =>
        new Set(answers.filter((x) => x.kind === kind).map((x) => x.answer.status));
      // No 500, no hang; store trouble is a 503 unavailable.
      for (const { answer } of answers) {
        expect(answer.status).not.toBe(500);
        expect(answer.ms).toBeLessThan(HANG_MS);
        if (answer.status === 503) expect(answer.error).toBe('unavailable');
      }
      expect([...statuses('good')].every((s) => s === 200 || s === 503)).toBe(true);
      expect([...statuses('login')].every((s) => s === 200 || s === 503)).toBe(true);
      expect(statuses('good').has(200)).toBe(true);
      // The kill fell in the traffic: logins, which need the store, met the outage.
      expect(statuses('login').has(503)).toBe(true);
      // Never accepted, at any moment.
      for (const kind of ['logged-out', 'old-password', 'revoked-during']) {
        expect(
          [...statuses(kind)].every((s) => s === 401 || s === 503),
          kind,
        ).toBe(true);
      }
      expect(
        [...statuses('old-password-login')].every((s) => s === 401 || s === 503 || s === 429),
      ).toBe(true);
      expect(answers.length).toBeGreaterThan(revokedAt);

      // Nothing acknowledged before the kill is lost on the promoted replica.
      for (const gw of gws) {
        expect((await proxied(gw, loggedOut)).status).toBe(401);
        expect((await proxied(gw, oldPassword)).status).toBe(401);
        expect(
          (await tokenFor(gw.url, { email: ALICE.email, password: newPassword }, 'acme'))
            .access_token,
        ).toBeTruthy();
        expect(
          (
            await call(`${gw.url}/1/token?tenant_id=acme`, {
              headers: { authorization: basic(ALICE.email, ALICE.password) },
            })
          ).status,
        ).toBe(401);
        expect((await tokenFor(gw.url, carol, carolTenant)).access_token).toBeTruthy();
      }
    }, 90_000);
  });

  async function waitForAsync(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (await condition().catch(() => false)) return;
      if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
});

/**
 * Issue 33: a refresh during a master kill (Sentinel; Cluster: the master of
 * the family's slot), through the API. A rotation is answered only once a
 * replica has it, so after the failover the used tokens stay used (a rotation
 * lost with the old master would make the used token current again); a
 * refresh whose answer was a 503 is retried and gets the same successor (it
 * is derived from the token presented), and the family goes on. Two gateways
 * share the store; the refreshes alternate between them.
 */
describe('a failover during a refresh', () => {
  interface Answer {
    status: number;
    body: { refresh_token?: string; error?: string };
  }

  async function refresh(gw: TestGateway, token: string): Promise<Answer> {
    const res = await refreshAt(gw.url, token, AbortSignal.timeout(5000));
    return { status: res.status, body: (await res.json()) as Answer['body'] };
  }

  /** Until the answer is not a 503 (the store between masters), for at most 20 s; `sentAt`: the last try's start. */
  async function settled(gw: TestGateway, token: string): Promise<Answer & { sentAt: number }> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const sentAt = Date.now();
      const answer = { ...(await refresh(gw, token)), sentAt };
      if (answer.status !== 503 || Date.now() > deadline) return answer;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  describe.each(topologies)('a %s failover', (_name, startTopology) => {
    let topology: Topology;
    let fx: IdentityFixture;
    let a: TestGateway;
    let b: TestGateway;
    let keyPrefix: string;

    beforeAll(async () => {
      topology = await startTopology();
      ({ fx, keyPrefix, a, b } = await onTopology(topology, {
        tokens: { refresh: { enabled: true } },
      }));
    }, 60_000);
    afterAll(async () => {
      await fx?.close();
      await topology?.stop();
    });

    it('a used refresh token stays used across the failover; a refresh cut by it is retried to the same successor', async () => {
      const login = await fetch(`${a.url}/1/token?tenant_id=acme`, {
        headers: { authorization: basic(ALICE.email, ALICE.password) },
      });
      expect(login.status).toBe(200);
      const t0 = ((await login.json()) as { refresh_token: string }).refresh_token;
      const first = await refresh(b, t0);
      expect(first.status).toBe(200);
      const t1 = first.body.refresh_token as string;

      // The refresh of t1 races the kill: answered (the replica has it), or 503.
      const familyId = t0.slice(4, 30);
      const killedAt = Date.now();
      const [during] = await Promise.all([
        refresh(a, t1),
        topology.killMasterOf(`${keyPrefix}refresh:{${familyId}}`),
      ]);
      expect([200, 503]).toContain(during.status);
      // Retried, or presented again (a lost answer): the same one successor, never a
      // second — within the grace. On a loaded machine the failover can outlast it:
      // then a retry is reuse, as documented, and the family ends.
      const retried = await settled(b, t1);
      const inGrace = retried.sentAt - killedAt < (REFRESH_GRACE_SECONDS - 1) * 1000;
      if (!inGrace && retried.status === 400) {
        // Past the grace a retry is reuse, as documented: the family ends, and nothing
        // used before or during the failover comes back.
        expect(retried.body.error).toBe('invalid_grant');
        expect((await settled(a, t0)).status).toBe(400);
        if (during.status === 200)
          expect((await settled(a, during.body.refresh_token as string)).status).toBe(400);
        return;
      }
      expect(retried.status).toBe(200);
      if (during.status === 200) expect(retried.body.refresh_token).toBe(during.body.refresh_token);
      const t2 = retried.body.refresh_token as string;

      // The family goes on from the successor on the new master…
      const next = await settled(a, t2);
      expect(next.status).toBe(200);
      const t3 = next.body.refresh_token as string;
      // …and what was used before the kill is still used: presenting it is reuse.
      const reused = await settled(b, t0);
      expect(reused).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
      expect((await settled(a, t3)).status).toBe(400);
    }, 60_000);
  });
});
