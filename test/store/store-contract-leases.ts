/**
 * Revocation leases (`RevocationLeases`), the same on every store shared
 * between processes — one Redis, Sentinel, Cluster. The memory store has
 * none (it lives in one process).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RevocationLeases, SessionEvent, Store } from '../../src/store/types.js';
import type { MakeStore } from './store-contract.js';
import { waitUntil } from './store-fixtures.js';

export function describeLeaseContract(name: string, makeStore: MakeStore): void {
  describe(`Revocation leases: ${name}`, () => {
    let store: Store;
    let leases: RevocationLeases;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      ({ store, cleanup } = await makeStore());
      if (store.revocations.leases === undefined)
        throw new Error(`${name} has no revocation leases`);
      leases = store.revocations.leases;
    });
    afterEach(() => cleanup());

    it('a first hold takes a new lease; the next ones renew it; after release it is new again', async () => {
      const holder = randomUUID();
      expect(await leases.hold(holder, 5000)).toBe(false);
      expect(await leases.hold(holder, 5000)).toBe(true);
      await leases.release(holder);
      expect(await leases.hold(holder, 5000)).toBe(false);
      await leases.release(holder);
    });

    it('a lease past its end is gone: its holder is not waited for, and its next hold is new', async () => {
      const holder = randomUUID();
      await leases.hold(holder, 50);
      const id = randomUUID();
      expect(await leases.unacknowledged(id)).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 80));
      expect(await leases.unacknowledged(id)).toBe(0);
      expect(await leases.hold(holder, 5000)).toBe(false);
      await leases.release(holder);
    });

    it('counts the live holders that have not acknowledged; fencing ends exactly their leases', async () => {
      const [quick, silent] = [randomUUID(), randomUUID()];
      await leases.hold(quick, 5000);
      await leases.hold(silent, 5000);
      const id = randomUUID();
      expect(await leases.unacknowledged(id)).toBe(2);
      await leases.acknowledge(id, quick);
      expect(await leases.unacknowledged(id)).toBe(1);
      const left = await leases.fenceUnacknowledged(id);
      expect(left).toBeGreaterThan(4000);
      expect(left).toBeLessThanOrEqual(5000);
      expect(await leases.unacknowledged(id)).toBe(0);
      expect(await leases.fenceUnacknowledged(id)).toBe(0);
      expect(await leases.hold(quick, 5000)).toBe(true);
      expect(await leases.hold(silent, 5000)).toBe(false); // fenced: it must drop its cache
      await leases.release(quick);
      await leases.release(silent);
    });

    // Over the subscription, as every instance hears it (the revoker's own included).
    it('a confirmation request reaches a watcher as its events, then its id', async () => {
      {
        const heard: (SessionEvent | string)[] = [];
        let live = false;
        const stop = store.revocations.watchSessions({
          onEvent: (event) => heard.push(event),
          onLive: (value) => (live = value),
          onConfirmationRequest: (id) => heard.push(id),
        });
        await waitUntil(() => live);
        const events: SessionEvent[] = [
          { kind: 'token-revoked', jti: randomUUID() },
          { kind: 'membership-removed', userId: 'u1', tenantId: 'acme' },
        ];
        const id = randomUUID();
        await leases.requestConfirmation(id, events);
        await waitUntil(() => heard.includes(id));
        // On Cluster it arrives once per master: every copy is whole and in this order.
        expect(heard.slice(0, 3)).toEqual([...events, id]);
        stop();
      }
    });
  });
}
