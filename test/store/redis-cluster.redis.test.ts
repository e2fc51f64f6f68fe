/**
 * Issue 14: the store on a real Redis Cluster (three masters, a replica
 * each): the whole store contract, session events from every slot reaching a
 * watcher, and a master failover of the directory's slot.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createRedisStore } from '../../src/store/redis-store.js';
import type { SessionEvent, Store } from '../../src/store/types.js';
import { startCluster } from '../support/redis-topologies.js';
import { suiteResource } from '../support/suite-resource.js';
import { describeLeaseContract } from './store-contract-leases.js';
import { describeStoreContract, newUser, type MakeStore } from './store-contract.js';

const cluster = suiteResource(startCluster, (c) => c.stop());

const openStore = (keyPrefix = `tg-test-${randomUUID().slice(0, 8)}:`): Promise<Store> =>
  createRedisStore({ cluster: { nodes: cluster().nodes }, keyPrefix, commandTimeoutMs: 1000 });

/** A fresh store for one case of the contract suites. */
const makeStore: MakeStore = async () => {
  const store = await openStore();
  return { store, cleanup: () => store.close() };
};

describeStoreContract('redis cluster', makeStore);
describeLeaseContract('redis cluster', makeStore);

/** Watches `store`'s session events until `stop()`; `live` follows delivery. */
function watch(store: Store) {
  const events: SessionEvent[] = [];
  /** Every change of `live`, in order. */
  const transitions: boolean[] = [];
  const state = { live: false, events, transitions };
  const stop = store.revocations.watchSessions({
    onEvent: (event) => events.push(event),
    onLive: (live) => {
      state.live = live;
      transitions.push(live);
    },
  });
  return { state, stop };
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('session events on Cluster', () => {
  it('reach another instance before the write that made them resolves, from any slot', async () => {
    const prefix = `tg-test-${randomUUID().slice(0, 8)}:`;
    const [writer, reader] = [await openStore(prefix), await openStore(prefix)];
    const { state, stop } = watch(reader);
    try {
      await until(() => state.live);
      const user = newUser();
      await writer.users.createUser(user);
      // Revocations live on their token's own slot: many ids, so on every master.
      const jtis = Array.from({ length: 12 }, () => randomUUID());
      for (const jti of jtis) {
        await writer.revocations.revokeToken(jti, Math.floor(Date.now() / 1000) + 60);
        expect(state.events.some((e) => e.kind === 'token-revoked' && e.jti === jti)).toBe(true);
      }
      const version = await writer.users.setPasswordHash(user.id, '$2b$10$other');
      expect(
        state.events.some(
          (e) => e.kind === 'session-ended' && e.userId === user.id && e.sessionVersion === version,
        ),
      ).toBe(true);
    } finally {
      stop();
      await writer.close();
      await reader.close();
    }
  });

  it("a master failover of the directory's slot: not live meanwhile, then live and writing again", async () => {
    const prefix = `tg-test-${randomUUID().slice(0, 8)}:`;
    const store = await openStore(prefix);
    const { state, stop } = watch(store);
    try {
      await until(() => state.live);
      const first = newUser();
      await store.users.createUser(first);
      const before = state.transitions.length;
      const { oldPort, newPort } = await cluster().killMasterOf(`${prefix}{dir}:users`);
      expect(newPort).not.toBe(oldPort);
      await until(async () => {
        try {
          await store.users.createUser(newUser());
          return state.live;
        } catch {
          return false;
        }
      }, 20_000);
      // Not live at some point after the kill, live again at the end.
      expect(state.transitions.slice(before)).toContain(false);
      expect(state.live).toBe(true);
      // Written (and acknowledged by a replica) before the kill: still there.
      expect((await store.users.getUser(first.id))?.email).toBe(first.email);
    } finally {
      stop();
      await store.close();
    }
  }, 60_000);
});

describe('rate-limit leases on Cluster', () => {
  it('settles buckets on every slot in one batch, and two instances never hold more than the burst', async () => {
    const prefix = `tg-test-${randomUUID().slice(0, 8)}:`;
    const [a, b] = [await openStore(prefix), await openStore(prefix)];
    const holder = (id: string) => ({ id, silentAfterMs: 60_000 });
    // Twenty buckets: their keys hash to slots on all three masters.
    const buckets = Array.from({ length: 20 }, (_, i) => `%2Forders:tenant:1:10:tenant-${i}`);
    const ask = (held: number, leaving = false) =>
      buckets.map((bucket) => ({ bucket, ratePerSecond: 1, burst: 10, held, charge: 0, leaving }));
    try {
      const first = await a.leaseRates!(holder('a'), ask(0));
      expect(first).toEqual(buckets.map(() => ({ grant: 10, instances: 1, shared: 0 })));
      // A holds the whole burst everywhere: B is counted, and gets what refilled meanwhile at most.
      const second = await b.leaseRates!(holder('b'), ask(0));
      for (const lease of second) {
        expect(lease?.instances).toBe(2);
        expect(lease?.grant).toBeLessThan(1);
      }
      // A gives its holding back: B's fair share is now the whole bucket.
      await a.leaseRates!(holder('a'), ask(10, true));
      const third = await b.leaseRates!(holder('b'), ask(0));
      for (const lease of third) {
        expect(lease?.instances).toBe(1);
        expect(lease?.grant).toBeGreaterThanOrEqual(9.9);
        expect(lease?.grant).toBeLessThanOrEqual(10);
      }
    } finally {
      await a.close();
      await b.close();
    }
  });
});
