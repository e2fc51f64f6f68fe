/**
 * Issue 33: a refresh during a master kill (Sentinel; Cluster: the master of
 * the family's slot), through the API. A rotation is answered only once a
 * replica has it, so after the failover the used tokens stay used (a rotation
 * lost with the old master would make the used token current again); a
 * refresh whose answer was a 503 is retried and gets the same successor (it
 * is derived from the token presented), and the family goes on. Two gateways
 * share the store; the refreshes alternate between them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFRESH_GRACE_SECONDS } from '../../src/auth/refresh-grant.js';
import { basic, uniquePrefix, type TestGateway } from '../support/gateway.js';
import { ALICE, startIdentityFixture, type IdentityFixture } from '../support/identity-fixture.js';
import { startCluster, startSentinelSet } from '../support/redis-topologies.js';

/** A store topology: its `store.redis` keys, and how to kill the master holding a family. */
interface Topology {
  redis: Record<string, unknown>;
  killMaster(familyId: string): Promise<unknown>;
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
        // The master of the family's slot (`redis-keys.ts`: one key per family).
        killMaster: (familyId) => cluster.killMasterOf(`${keyPrefix}refresh:{${familyId}}`),
        stop: () => cluster.stop(),
      };
    },
  ],
];

interface Answer {
  status: number;
  body: { refresh_token?: string; error?: string };
}

async function refresh(gw: TestGateway, token: string): Promise<Answer> {
  const res = await fetch(`${gw.url}/1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token }).toString(),
    signal: AbortSignal.timeout(5000),
  });
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

  beforeAll(async () => {
    const keyPrefix = uniquePrefix();
    topology = await startTopology(keyPrefix);
    fx = await startIdentityFixture({
      store: {
        redis: { ...topology.redis, keyPrefix, commandTimeoutMs: 500, connectTimeoutMs: 5000 },
      },
      tokens: { refresh: { enabled: true } },
    });
    a = fx.gw;
    b = await fx.startAnother();
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
    const [during] = await Promise.all([refresh(a, t1), topology.killMaster(familyId)]);
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
