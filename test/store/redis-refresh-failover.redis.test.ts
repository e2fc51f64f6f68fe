/**
 * Issue 33: a used refresh token stays used across a failover. A rotation is
 * answered only once a replica has it, so a Sentinel (or Cluster) failover
 * right after — or during a chain of rotations — never brings back a token
 * the store said was used; and a rotation that could not be confirmed is on
 * the master all the same, so the client's retry gets the same successor.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isGatewayError } from '../../src/errors.js';
import { createRedisKeys } from '../../src/store/redis-keys.js';
import { createRedisStore } from '../../src/store/redis-store.js';
import type { RefreshFamily, RotateRefreshInput, Store } from '../../src/store/types.js';
import { startCluster, startSentinelSet } from '../support/redis-topologies.js';
import { suiteResource } from '../support/suite-resource.js';
import { digest, plainFamily } from './store-fixtures.js';

const GRACE = 10;

/** As the API derives it: the successor follows from the token presented. */
const successorOf = (presentedDigest: string): string => digest(`next:${presentedDigest}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const newFamily = (): RefreshFamily => plainFamily(86_400, 3600);

function rotation(family: RefreshFamily, presentedDigest: string, now: number): RotateRefreshInput {
  return {
    familyId: family.familyId,
    presentedDigest,
    successorDigest: successorOf(presentedDigest),
    jti: randomUUID(),
    accessExpiresAt: now + 900,
    now,
    graceSeconds: GRACE,
    idleTtlSeconds: 3600,
  };
}

/**
 * Rotates `family` along its chain while `kill` runs, retrying a refused
 * rotation as a client would (the same token, the same successor, no time
 * passed); stops a few rotations after the kill has ended.
 * @returns the tokens the store answered as used, in order, and the clock.
 */
async function rotateThrough(
  store: Store,
  family: RefreshFamily,
  kill: () => Promise<unknown>,
): Promise<{ used: string[]; now: number }> {
  let killed = false;
  const killing = sleep(100)
    .then(kill)
    .then(() => (killed = true));
  const used: string[] = [];
  let presented = family.currentDigest;
  let now = family.createdAt;
  let afterKill = 0;
  const deadline = Date.now() + 40_000;
  while (afterKill < 5 && Date.now() < deadline) {
    const result = await store.refresh
      .rotateRefreshToken(rotation(family, presented, now + 1))
      .catch((err: unknown) => {
        if (!isGatewayError(err) || err.code !== 'unavailable') throw err;
        return undefined;
      });
    if (result === undefined) {
      await sleep(50);
      continue;
    }
    // A retry of a rotation that landed unconfirmed is grace; nothing is ever reuse.
    expect(['rotated', 'grace']).toContain(result.outcome);
    used.push(presented);
    presented = successorOf(presented);
    now += 1;
    if (killed) afterKill++;
  }
  await killing;
  expect(afterKill).toBe(5);
  return { used, now };
}

/**
 * A rotation as a client makes it: `unavailable` (the store could not confirm
 * the write on a replica, as just after a failover while the other replica
 * re-attaches) is answered 503 and retried; the retry gets the same outcome
 * the write had (the first test of this file).
 */
async function rotateRetrying(store: Store, input: RotateRefreshInput) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await store.refresh.rotateRefreshToken(input);
    } catch (err) {
      if (!isGatewayError(err) || err.code !== 'unavailable' || attempt === 40) throw err;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/** Every token the store answered as used is used still; the last one's successor is current. */
async function expectChainKept(store: Store, family: RefreshFamily, used: string[], now: number) {
  const last = used.at(-1)!;
  const again = await rotateRetrying(store, rotation(family, last, now));
  expect(again.outcome).toBe('grace');
  expect(again.outcome === 'grace' && again.family.currentDigest).toBe(successorOf(last));
  for (const token of used.slice(0, -1)) {
    const stale = await rotateRetrying(store, rotation(family, token, now + GRACE + 1));
    expect(stale.outcome, 'a token used before the failover').not.toBe('rotated');
    expect(stale.outcome).not.toBe('grace');
  }
  expect((await store.refresh.getRefreshFamily(family.familyId))?.revoked).toBe(true);
}

describe('refresh families on Sentinel', () => {
  const sentinel = suiteResource(startSentinelSet, (s) => s.stop());

  const openStore = (commandTimeoutMs = 500) =>
    createRedisStore({
      sentinel: { name: sentinel().name, nodes: sentinel().sentinels },
      keyPrefix: `tg-test-${randomUUID()}:`,
      commandTimeoutMs,
    });

  it('an unconfirmed rotation is unavailable, yet on the master: the retry gets the same successor', async () => {
    const store = await openStore(400);
    try {
      const family = newFamily();
      await store.refresh.createRefreshFamily(family, 5);
      const input = rotation(family, family.currentDigest, family.createdAt + 1);
      for (const replica of sentinel().replicas) replica.pause();
      const err = await store.refresh.rotateRefreshToken(input).catch((e: unknown) => e);
      expect(isGatewayError(err) && err.code).toBe('unavailable');
      for (const replica of sentinel().replicas) replica.resume();
      const retry = await store.refresh.rotateRefreshToken({ ...input, jti: randomUUID() });
      expect(retry.outcome).toBe('grace');
      expect(retry.outcome === 'grace' && retry.family.currentDigest).toBe(input.successorDigest);
    } finally {
      for (const replica of sentinel().replicas) replica.resume();
      await store.close();
    }
  });

  it('a master killed during rotations: no used token comes back, nothing is taken for reuse', async () => {
    const store = await openStore();
    try {
      const family = newFamily();
      await store.refresh.createRefreshFamily(family, 5);
      const { used, now } = await rotateThrough(store, family, () => sentinel().killMaster());
      await expectChainKept(store, family, used, now);
    } finally {
      await store.close();
    }
  }, 60_000);
});

describe('refresh families on Cluster', () => {
  const cluster = suiteResource(startCluster, (c) => c.stop());

  it("the master of a family's slot killed during rotations: no used token comes back", async () => {
    const keyPrefix = `tg-test-${randomUUID().slice(0, 8)}:`;
    const store = await createRedisStore({
      cluster: { nodes: cluster().nodes },
      keyPrefix,
      commandTimeoutMs: 1000,
    });
    try {
      const family = newFamily();
      await store.refresh.createRefreshFamily(family, 5);
      const key = createRedisKeys(keyPrefix).refreshFamily(family.familyId);
      const { used, now } = await rotateThrough(store, family, () => cluster().killMasterOf(key));
      await expectChainKept(store, family, used, now);
    } finally {
      await store.close();
    }
  }, 60_000);
});
