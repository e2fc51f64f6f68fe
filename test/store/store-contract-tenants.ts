/**
 * The store contract for the tenants slice (`Store.tenants`): upserts, types, listing.
 * Registered by `describeStoreContract`.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/types.js';
import { newUser, NOW, orgTenant, rejectionOf, storeOf } from './store-fixtures.js';

/** @param current the store of the running test (a fresh one each). */
export function describeTenantContract(current: () => Store): void {
  const store = storeOf(current);

  describe('tenants', () => {
    it('creates a tenant with createdAt = modifiedAt = now', async () => {
      const created = await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      const expected = { ...orgTenant('acme'), createdAt: NOW, modifiedAt: NOW };
      expect(created).toEqual(expected);
      expect(await store.tenants.getTenant('acme')).toEqual(expected);
      expect(await store.tenants.listTenants()).toEqual([expected]);
    });

    it('updates fields, keeping createdAt and moving modifiedAt', async () => {
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      const changes = { name: 'Acme Inc', cloudRegion: 'us-east-1', createdBy: 'x@example.com' };
      const updated = await store.tenants.upsertTenant(orgTenant('acme', changes), NOW + 10);
      const expected = { ...orgTenant('acme', changes), createdAt: NOW, modifiedAt: NOW + 10 };
      expect(updated).toEqual(expected);
      expect(await store.tenants.getTenant('acme')).toEqual(expected);
    });

    it("refuses to change an existing tenant's type, writing nothing", async () => {
      // Its members' tokens carry the type (tenant_type), and routes admit by it.
      const created = await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      for (const changes of [
        { type: 'usertenant' as const },
        { type: 'usertenant' as const, name: 'Acme Inc', cloudRegion: 'us-east-1' },
      ]) {
        const err = await rejectionOf(
          store.tenants.upsertTenant(orgTenant('acme', changes), NOW + 15),
        );
        expect(err.code).toBe('invalid_request');
        expect(err.message).toBe(
          "A tenant's type cannot change: remove the tenant and create it again.",
        );
      }
      expect(await store.tenants.getTenant('acme')).toEqual(created);
      const user = await store.users.createUser(newUser());
      const personal = await store.tenants.getTenant(user.personalTenantId);
      const asOrg = { ...orgTenant(user.personalTenantId), name: 'Taken over' };
      expect((await rejectionOf(store.tenants.upsertTenant(asOrg, NOW + 15))).code).toBe(
        'invalid_request',
      );
      expect(await store.tenants.getTenant(user.personalTenantId)).toEqual(personal);
    });

    it('treats an unchanged upsert as a no-op', async () => {
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      const again = await store.tenants.upsertTenant(orgTenant('acme'), NOW + 20);
      expect(again).toEqual({ ...orgTenant('acme'), createdAt: NOW, modifiedAt: NOW });
      expect((await store.tenants.getTenant('acme'))?.modifiedAt).toBe(NOW);
    });

    it('returns null for an unknown tenant and lists tenants sorted', async () => {
      expect(await store.tenants.getTenant('nope')).toBeNull();
      expect(await store.tenants.listTenants()).toEqual([]);
      for (const id of ['org-b', 'org-C', 'org-a']) {
        await store.tenants.upsertTenant(orgTenant(id), NOW);
      }
      expect((await store.tenants.listTenants()).map((t) => t.tenantId)).toEqual([
        'org-C',
        'org-a',
        'org-b',
      ]);
    });
  });
}
