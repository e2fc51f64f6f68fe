/**
 * The store contract for the revocations slice (`Store.revocations`): the token deny-list and the session events every watcher hears.
 * Registered by `describeStoreContract`.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/types.js';
import { distinct, newUser, NOW, orgTenant, sleep, watchLive, storeOf } from './store-fixtures.js';

/** @param current the store of the running test (a fresh one each). */
export function describeRevocationContract(current: () => Store): void {
  const store = storeOf(current);

  describe('token revocation', () => {
    it('deny-lists a token id until its expiry', async () => {
      const inAMinute = Math.floor(Date.now() / 1000) + 60;
      expect(await store.revocations.isTokenRevoked('jti-1')).toBe(false);
      await store.revocations.revokeToken('jti-1', inAMinute);
      expect(await store.revocations.isTokenRevoked('jti-1')).toBe(true);
      expect(await store.revocations.isTokenRevoked('jti-2')).toBe(false);
      await store.revocations.revokeToken('jti-1', inAMinute + 60);
      expect(await store.revocations.isTokenRevoked('jti-1')).toBe(true);
    });

    it('forgets an entry once its expiry has passed', async () => {
      await store.revocations.revokeToken('jti-short', Date.now() / 1000 + 1);
      expect(await store.revocations.isTokenRevoked('jti-short')).toBe(true);
      await sleep(1200);
      expect(await store.revocations.isTokenRevoked('jti-short')).toBe(false);
    });

    it('does not deny-list a token that has already expired', async () => {
      await store.revocations.revokeToken('jti-old', Math.floor(Date.now() / 1000) - 10);
      expect(await store.revocations.isTokenRevoked('jti-old')).toBe(false);
    });
  });

  describe('session events', () => {
    it('tells a watcher of its own password changes and revocations before they resolve', async () => {
      const { events, stop } = await watchLive(store);
      try {
        const user = await store.users.createUser(newUser());
        await store.users.setPasswordHash(
          user.id,
          '$2b$04$abcdefghijklmnopqrstuuSGZYtOLo8u7mqKVN5b1D5XnQkWq6PVy',
        );
        // No waiting: the instance that made a change must never act on the old state.
        expect(events).toContainEqual({
          kind: 'session-ended',
          userId: user.id,
          sessionVersion: 1,
        });
        await store.revocations.revokeToken('jti-event', Math.floor(Date.now() / 1000) + 60);
        expect(events).toContainEqual({ kind: 'token-revoked', jti: 'jti-event' });
        // An event may come twice (told locally, then over pub/sub), never anything else.
        await sleep(100);
        expect(distinct(events)).toEqual([
          { kind: 'session-ended', userId: user.id, sessionVersion: 1 },
          { kind: 'token-revoked', jti: 'jti-event' },
        ]);
      } finally {
        stop();
      }
    });

    it('tells a watcher of membership removals and additions before they resolve', async () => {
      const user = await store.users.createUser(newUser());
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      const { events, stop } = await watchLive(store);
      try {
        expect(await store.memberships.addMember('acme', user.id)).toBe(true);
        const added = (await store.memberships.readMembership('acme', user.id)).membership
          ?.generation;
        const pair = { userId: user.id, tenantId: 'acme' };
        expect(events).toContainEqual({ kind: 'membership-added', ...pair, generation: added });
        expect(await store.memberships.removeMember('acme', user.id)).toBe(true);
        const removed = (await store.memberships.readMembership('acme', user.id)).asOf;
        expect(removed).toBeGreaterThan(added as number);
        // No waiting: a removal must end access on the instance that made it at once.
        expect(events).toContainEqual({
          kind: 'membership-removed',
          ...pair,
          generation: removed,
        });
        await sleep(100);
        expect(distinct(events)).toEqual([
          { kind: 'membership-added', ...pair, generation: added },
          { kind: 'membership-removed', ...pair, generation: removed },
        ]);
      } finally {
        stop();
      }
    });

    it('publishes nothing for a change that did not happen', async () => {
      const user = await store.users.createUser(newUser());
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      await store.memberships.addMember('acme', user.id);
      const { events, stop } = await watchLive(store);
      try {
        expect(await store.users.setPasswordHash('u-missing', 'x')).toBeNull();
        await store.revocations.revokeToken('jti-expired', Math.floor(Date.now() / 1000) - 10);
        expect(await store.memberships.addMember('acme', user.id)).toBe(true);
        expect(await store.memberships.addMember('acme', 'u-nobody')).toBe(false);
        expect(await store.memberships.removeMember('nope', user.id)).toBe(false);
        await sleep(100);
        expect(events).toEqual([]);
      } finally {
        stop();
      }
    });
  });
}
