/**
 * The store contract for the machine clients slice (`Store.clients`,
 * issue 32): what each backend keeps, that every change takes a new
 * generation, that a rotation leaves the old digest unknown, and that a
 * tenant's removal takes its clients and keys along. Registered by
 * `describeStoreContract`.
 */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import type { Store } from '../../src/store/types.js';
import { newClient, newKey, newUser, NOW, orgTenant } from './store-fixtures.js';

/** @param current the store of the running test (a fresh one each). */
export function describeClientContract(current: () => Store): void {
  describe('machine clients', () => {
    it('creates a client of an org tenant at a new generation, scopes sorted and unique', async () => {
      const store = current();
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      const before = (await store.memberships.readMembership('acme', 'u-nobody')).asOf;
      const input = newClient('acme', { expiresAt: NOW + 3600 });
      const created = await store.clients.createClient(input);
      expect(created).toEqual({
        ...input,
        scopes: ['orders:read', 'orders:write'],
        generation: before + 1,
      });
      expect(await store.clients.getClient(input.clientId)).toEqual(created);
      expect(await store.clients.listClients('acme')).toEqual([created]);
      expect((await store.memberships.readMembership('acme', 'u-nobody')).asOf).toBe(before + 1);
    });

    it('keeps a client without expiry or scopes without them', async () => {
      const store = current();
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      const input = newClient('acme', { scopes: [] });
      const created = await store.clients.createClient(input);
      expect(created?.scopes).toEqual([]);
      const read = await store.clients.getClient(input.clientId);
      expect(read).toEqual(created);
      expect(read).not.toHaveProperty('expiresAt');
      expect(read).not.toHaveProperty('rotatedAt');
    });

    it('keeps who made a client (admin or operator), and none when none was given (issue 42)', async () => {
      const store = current();
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      for (const createdBy of ['admin', 'operator'] as const) {
        const created = await store.clients.createClient(newClient('acme', { createdBy }));
        expect(created?.createdBy).toBe(createdBy);
        expect(await store.clients.getClient(created!.clientId)).toEqual(created);
        const rotated = await store.clients.rotateClientSecret(
          created!.clientId,
          'c'.repeat(64),
          NOW + 1,
        );
        expect(rotated?.createdBy).toBe(createdBy);
      }
      const bare = await store.clients.createClient(newClient('acme'));
      expect(await store.clients.getClient(bare!.clientId)).not.toHaveProperty('createdBy');
    });

    it('refuses a client of a missing or personal tenant, and a taken id', async () => {
      const store = current();
      const user = await store.users.createUser(newUser());
      expect(await store.clients.createClient(newClient('nowhere'))).toBeNull();
      expect(await store.clients.createClient(newClient(user.personalTenantId))).toBeNull();
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      const input = newClient('acme');
      await store.clients.createClient(input);
      const err = await store.clients
        .createClient({ ...input, name: 'other' })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(GatewayError);
      expect((err as GatewayError).code).toBe('internal_error');
      expect((await store.clients.getClient(input.clientId))?.name).toBe(input.name);
      expect(await store.clients.listClients('nowhere')).toEqual([]);
    });

    it('lists a tenant’s clients sorted by id, no other tenant’s', async () => {
      const store = current();
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      await store.tenants.upsertTenant(orgTenant('globex'), NOW);
      const b = await store.clients.createClient(
        newClient('acme', { clientId: 'tgc_bbbbbbbbbbbbbbbbbbbbbbbbbb' }),
      );
      const a = await store.clients.createClient(
        newClient('acme', { clientId: 'tgc_aaaaaaaaaaaaaaaaaaaaaaaaaa' }),
      );
      await store.clients.createClient(newClient('globex'));
      expect(await store.clients.listClients('acme')).toEqual([a, b]);
    });

    it('rotates a secret at a new generation: the old digest is unknown from then on', async () => {
      const store = current();
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      const created = await store.clients.createClient(newClient('acme'));
      const rotated = await store.clients.rotateClientSecret(
        created!.clientId,
        'c'.repeat(64),
        NOW + 5,
      );
      expect(rotated).toEqual({
        ...created,
        secretDigest: 'c'.repeat(64),
        rotatedAt: NOW + 5,
        generation: rotated!.generation,
      });
      expect(rotated!.generation).toBeGreaterThan(created!.generation);
      const read = await store.clients.getClient(created!.clientId);
      expect(read).toEqual(rotated);
      expect(read!.secretDigest).not.toBe(created!.secretDigest);
      expect(await store.clients.rotateClientSecret('tgc_nobody', 'd'.repeat(64), NOW)).toBeNull();
      expect(await store.clients.getClient('tgc_nobody')).toBeNull();
    });

    it('removes a client with its keys, at a new generation', async () => {
      const store = current();
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      const client = (await store.clients.createClient(newClient('acme')))!;
      const other = (await store.clients.createClient(newClient('acme')))!;
      const k1 = (await store.apiKeys.createApiKey(newKey(client.clientId)))!;
      const k2 = (await store.apiKeys.createApiKey(newKey(client.clientId)))!;
      const kept = (await store.apiKeys.createApiKey(newKey(other.clientId)))!;
      const before = (await store.memberships.readMembership('acme', 'u-nobody')).asOf;
      expect(await store.clients.removeClient(client.clientId)).toEqual(
        [k1.keyId, k2.keyId].sort(),
      );
      expect((await store.memberships.readMembership('acme', 'u-nobody')).asOf).toBeGreaterThan(
        before,
      );
      expect(await store.clients.getClient(client.clientId)).toBeNull();
      expect(await store.apiKeys.getApiKey(k1.keyId)).toBeNull();
      expect(await store.apiKeys.getApiKey(k2.keyId)).toBeNull();
      expect(await store.apiKeys.listApiKeys(client.clientId)).toEqual([]);
      expect(await store.clients.listClients('acme')).toEqual([other]);
      expect(await store.apiKeys.getApiKey(kept.keyId)).toEqual(kept);
      expect(await store.clients.removeClient(client.clientId)).toBeNull();
    });
  });
}
