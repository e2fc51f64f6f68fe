/**
 * The store contract for removals (issue 21: `user remove`, `tenant remove`):
 * everything a user or an org tenant held goes in one step, each membership
 * that ends is published as `membership-removed` before the call resolves,
 * and nothing else is touched. Registered by `describeStoreContract`.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/types.js';
import { distinct, newUser, NOW, orgTenant, sleep, watchLive } from './store-fixtures.js';

/** @param current the store of the running test (a fresh one each). */
export function describeRemovalContract(current: () => Store): void {
  describe('removals', () => {
    it('removeUser takes the user, their e-mail, personal tenant and memberships', async () => {
      const store = current();
      const user = await store.users.createUser(newUser({ email: 'gone@example.com' }));
      const other = await store.users.createUser(newUser());
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      await store.memberships.addMember('acme', user.id);
      await store.memberships.addMember('acme', other.id);

      expect(await store.users.removeUser(user.id)).toEqual(['acme', user.personalTenantId].sort());
      expect(await store.users.getUser(user.id)).toBeNull();
      expect(await store.users.getSessionVersion(user.id)).toBeNull();
      expect(await store.users.findUserByEmail('gone@example.com')).toBeNull();
      expect(await store.tenants.getTenant(user.personalTenantId)).toBeNull();
      expect(await store.memberships.listMembers(user.personalTenantId)).toEqual([]);
      expect(await store.memberships.listUserTenants(user.id)).toEqual([]);
      expect(await store.memberships.isMember('acme', user.id)).toBe(false);
      expect(await store.memberships.listMembers('acme')).toEqual([other.id]);
      expect((await store.users.listUsers()).map((u) => u.id)).toEqual([other.id]);
      expect((await store.tenants.listTenants()).map((t) => t.tenantId).sort()).toEqual(
        ['acme', other.personalTenantId].sort(),
      );
      expect(await store.users.getUser(other.id)).toEqual(other);

      // Gone is gone: again, null; and the e-mail is free for a new user.
      expect(await store.users.removeUser(user.id)).toBeNull();
      expect(await store.users.removeUser('u-nobody')).toBeNull();
      const again = await store.users.createUser(newUser({ email: 'gone@example.com' }));
      expect(await store.users.findUserByEmail('gone@example.com')).toEqual(again);
    });

    it('removeOrgTenant takes the tenant and its memberships, not its members', async () => {
      const store = current();
      const [a, b] = [
        await store.users.createUser(newUser()),
        await store.users.createUser(newUser()),
      ];
      for (const id of ['acme', 'globex']) await store.tenants.upsertTenant(orgTenant(id), NOW);
      for (const user of [a, b]) await store.memberships.addMember('acme', user.id);
      await store.memberships.addMember('globex', a.id);

      expect(await store.tenants.removeOrgTenant('acme')).toEqual([a.id, b.id].sort());
      expect(await store.tenants.getTenant('acme')).toBeNull();
      expect(await store.memberships.listMembers('acme')).toEqual([]);
      expect(await store.memberships.isMember('acme', a.id)).toBe(false);
      expect((await store.memberships.listUserTenants(a.id)).map((t) => t.tenantId).sort()).toEqual(
        ['globex', a.personalTenantId].sort(),
      );
      expect((await store.memberships.listUserTenants(b.id)).map((t) => t.tenantId)).toEqual([
        b.personalTenantId,
      ]);
      expect((await store.tenants.listTenants()).map((t) => t.tenantId)).not.toContain('acme');
      expect(await store.users.getUser(a.id)).toEqual(a);

      // An empty org tenant goes too; an unknown one, a removed one and a personal one do not.
      await store.tenants.upsertTenant(orgTenant('empty'), NOW);
      expect(await store.tenants.removeOrgTenant('empty')).toEqual([]);
      expect(await store.tenants.getTenant('empty')).toBeNull();
      expect(await store.tenants.removeOrgTenant('acme')).toBeNull();
      expect(await store.tenants.removeOrgTenant('nope')).toBeNull();
      expect(await store.tenants.removeOrgTenant(a.personalTenantId)).toBeNull();
      expect(await store.memberships.listMembers(a.personalTenantId)).toEqual([a.id]);
    });

    it('publishes membership-removed for every membership ended, before resolving', async () => {
      const store = current();
      const user = await store.users.createUser(newUser());
      const other = await store.users.createUser(newUser());
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      await store.tenants.upsertTenant(orgTenant('globex'), NOW);
      await store.memberships.addMember('acme', user.id);
      await store.memberships.addMember('globex', user.id);
      await store.memberships.addMember('globex', other.id);
      const { asOf: before } = await store.memberships.readMembership('globex', other.id);
      const { events, stop } = await watchLive(store);
      try {
        await store.tenants.removeOrgTenant('globex');
        // No waiting: the instance that made the change must never act on the old state.
        const byTenant = events.find(
          (e) => e.kind === 'membership-removed' && e.userId === user.id,
        );
        expect(byTenant).toEqual({
          kind: 'membership-removed',
          userId: user.id,
          tenantId: 'globex',
          generation: expect.any(Number),
        });
        // One new generation for the whole removal, later than every membership it ended.
        const tenantGone = (byTenant as { generation: number }).generation;
        expect(tenantGone).toBeGreaterThan(before);
        expect(events).toContainEqual({ ...byTenant, userId: other.id });
        await store.users.removeUser(user.id);
        const userGone = (await store.memberships.readMembership('acme', user.id)).asOf;
        expect(userGone).toBeGreaterThan(tenantGone);
        expect(events).toContainEqual({
          kind: 'membership-removed',
          userId: user.id,
          tenantId: user.personalTenantId,
          generation: userGone,
        });
        // Nothing for what did not happen; an event may come twice, never anything else.
        expect(await store.users.removeUser(user.id)).toBeNull();
        expect(await store.tenants.removeOrgTenant('globex')).toBeNull();
        await sleep(100);
        const ended = (userId: string, tenantId: string, generation: number) => ({
          kind: 'membership-removed',
          userId,
          tenantId,
          generation,
        });
        const ofTenant = [
          ended(user.id, 'globex', tenantGone),
          ended(other.id, 'globex', tenantGone),
        ].sort((x, y) => (x.userId < y.userId ? -1 : 1));
        const ofUser = [
          ended(user.id, 'acme', userGone),
          ended(user.id, user.personalTenantId, userGone),
        ].sort((x, y) => (x.tenantId < y.tenantId ? -1 : 1));
        // On Cluster the additions above may still arrive over the cluster bus
        // after the watch began: late, never new.
        const added = [
          { userId: user.id, tenantId: 'acme' },
          { userId: user.id, tenantId: 'globex' },
          { userId: other.id, tenantId: 'globex' },
        ];
        for (const event of events.filter((e) => e.kind === 'membership-added')) {
          expect(added).toContainEqual({ userId: event.userId, tenantId: event.tenantId });
          expect(event.generation).toBeLessThanOrEqual(before);
        }
        expect(distinct(events.filter((e) => e.kind !== 'membership-added'))).toEqual([
          ...ofTenant,
          ...ofUser,
        ]);
      } finally {
        stop();
      }
    });
  });
}
