/**
 * Issue 14: a failover during traffic, on Sentinel and on Cluster. Two
 * gateways share the store; its master (Cluster: the master of the
 * directory's slot) is killed while logins, proxied requests and refused
 * tokens keep coming. What must hold: no 500,
 * no request hanging, only 503 `unavailable` while there is no master, no
 * revoked or old-password token accepted at any moment, nothing written
 * before the kill lost, and both gateways recovering by themselves.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, bearer, uniquePrefix, type TestGateway } from '../support/gateway.js';
import {
  ALICE,
  BOB,
  startIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../support/identity-fixture.js';
import { startCluster, startSentinelSet } from '../support/redis-topologies.js';
import { startEchoUpstream, type CountingUpstream } from '../support/upstream.js';

/** Longer than any answer may take: the command timeout is 500 ms. */
const HANG_MS = 5000;

/** A store topology: its `store.redis` keys, and how to kill its (directory's) master. */
interface Topology {
  redis: Record<string, unknown>;
  killMaster(): Promise<{ oldPort: number; newPort: number }>;
  stop(): Promise<void>;
}

const topologies: [string, (keyPrefix: string) => Promise<Topology>][] = [
  [
    'Sentinel',
    async () => {
      const sentinel = await startSentinelSet();
      return {
        redis: { sentinel: { name: sentinel.name, nodes: sentinel.sentinels } },
        killMaster: () => sentinel.killMaster(),
        stop: () => sentinel.stop(),
      };
    },
  ],
  [
    'Cluster',
    async (keyPrefix) => {
      const cluster = await startCluster();
      return {
        redis: { cluster: { nodes: cluster.nodes } },
        killMaster: () => cluster.killMasterOf(`${keyPrefix}{dir}:users`),
        stop: () => cluster.stop(),
      };
    },
  ],
];

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

  beforeAll(async () => {
    const keyPrefix = uniquePrefix();
    [topology, upstream] = await Promise.all([startTopology(keyPrefix), startEchoUpstream()]);
    fx = await startIdentityFixture({
      store: {
        redis: { ...topology.redis, keyPrefix, commandTimeoutMs: 500, connectTimeoutMs: 5000 },
      },
      routes: [{ prefix: '/orders', upstream: upstream.url }],
      // The wrong-password loop below must not lock Alice out of her new password.
      limits: {
        login: { perEmail: 100_000, perIp: 100_000, maxQueuedPerEmail: 100, maxQueuedPerIp: 100 },
      },
    });
    gws = [fx.gw, await fx.startAnother()];
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
    const signup = await fetch(`${a.url}/1/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(carol),
    });
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
    const { oldPort, newPort } = await topology.killMaster();
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
    traffic.push(...gws.map((gw) => loop('revoked-during', () => proxied(gw, revoked as string))));

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
