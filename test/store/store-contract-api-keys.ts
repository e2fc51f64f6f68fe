/**
 * The store contract for the API keys slice (`Store.apiKeys`, issue 32):
 * keys of machine clients, each at a new generation, removed with their
 * client. Registered by `describeStoreContract`.
 */
import { describe, expect, it } from 'vitest';
import type { GatewayError } from '../../src/errors.js';
import type { Store } from '../../src/store/types.js';
import {
  distinct,
  newClient,
  newKey,
  newUser,
  NOW,
  orgTenant,
  watchLive,
} from './store-fixtures.js';

/** @param current the store of the running test (a fresh one each). */
export function describeApiKeyContract(current: () => Store): void {
  describe('API keys', () => {
    it('creates a key of a client at a new generation, with the client’s tenant', async () => {
      const store = current();
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      const client = (await store.clients.createClient(newClient('acme')))!;
      const input = newKey(client.clientId, { expiresAt: NOW + 60 });
      const key = await store.apiKeys.createApiKey(input);
      expect(key).toEqual({ ...input, tenantId: 'acme', generation: client.generation + 1 });
      expect(await store.apiKeys.getApiKey(input.keyId)).toEqual(key);
      expect(await store.apiKeys.listApiKeys(client.clientId)).toEqual([key]);
      expect(await store.apiKeys.createApiKey(newKey('tgc_nobody'))).toBeNull();
      const err = await store.apiKeys.createApiKey(input).catch((e: unknown) => e);
      expect((err as GatewayError).code).toBe('internal_error');
    });

    it('removes a key only from its own client, at a new generation', async () => {
      const store = current();
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      const client = (await store.clients.createClient(newClient('acme')))!;
      const other = (await store.clients.createClient(newClient('acme')))!;
      const key = (await store.apiKeys.createApiKey(newKey(client.clientId)))!;
      expect(await store.apiKeys.removeApiKey(other.clientId, key.keyId)).toBe(false);
      expect(await store.apiKeys.getApiKey(key.keyId)).toEqual(key);
      const before = (await store.memberships.readMembership('acme', 'u-nobody')).asOf;
      expect(await store.apiKeys.removeApiKey(client.clientId, key.keyId)).toBe(true);
      expect((await store.memberships.readMembership('acme', 'u-nobody')).asOf).toBe(before + 1);
      expect(await store.apiKeys.getApiKey(key.keyId)).toBeNull();
      expect(await store.apiKeys.listApiKeys(client.clientId)).toEqual([]);
      expect(await store.apiKeys.removeApiKey(client.clientId, key.keyId)).toBe(false);
    });

    it('tells its watchers of a key removed, a secret rotated and a client removed, before it resolves', async () => {
      const store = current();
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      const [keyed, rotated, removed] = [
        (await store.clients.createClient(newClient('acme')))!,
        (await store.clients.createClient(newClient('acme')))!,
        (await store.clients.createClient(newClient('acme')))!,
      ];
      const key = (await store.apiKeys.createApiKey(newKey(keyed.clientId)))!;
      const { events, stop } = await watchLive(store);
      // Each client its own, so a late pub/sub copy of one change cannot stand in for another.
      const told = (clientId: string) =>
        distinct(events).filter((e) => e.kind === 'client-changed' && e.clientId === clientId);
      try {
        // A key's removal ends what every instance verified of it (issue 32: at once, everywhere).
        expect(await store.apiKeys.removeApiKey(keyed.clientId, key.keyId)).toBe(true);
        expect(told(keyed.clientId)).toEqual([
          { kind: 'client-changed', clientId: keyed.clientId },
        ]);
        expect(await store.apiKeys.removeApiKey(keyed.clientId, key.keyId)).toBe(false);
        expect(told(rotated.clientId)).toEqual([]);
        expect(
          await store.clients.rotateClientSecret(rotated.clientId, 'f'.repeat(64), NOW),
        ).not.toBeNull();
        expect(told(rotated.clientId)).toHaveLength(1);
        expect(told(removed.clientId)).toEqual([]);
        expect(await store.clients.removeClient(removed.clientId)).not.toBeNull();
        expect(told(removed.clientId)).toHaveLength(1);
      } finally {
        stop();
      }
    });

    it('tells its watchers of the clients an org tenant took with it, before it resolves', async () => {
      const store = current();
      await store.tenants.upsertTenant(orgTenant('initech'), NOW);
      const client = (await store.clients.createClient(newClient('initech')))!;
      const { events, stop } = await watchLive(store);
      try {
        expect(await store.tenants.removeOrgTenant('initech')).toEqual([]);
        expect(distinct(events)).toContainEqual({
          kind: 'client-changed',
          clientId: client.clientId,
        });
      } finally {
        stop();
      }
    });

    it('records the last use, only forward, and never for a missing key', async () => {
      const store = current();
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      const client = (await store.clients.createClient(newClient('acme')))!;
      const key = (await store.apiKeys.createApiKey(newKey(client.clientId)))!;
      await store.apiKeys.touchApiKey(key.keyId, NOW + 10);
      await store.apiKeys.touchApiKey(key.keyId, NOW + 5);
      expect(await store.apiKeys.getApiKey(key.keyId)).toEqual({ ...key, lastUsedAt: NOW + 10 });
      await store.apiKeys.touchApiKey('tgkid_nobody', NOW);
      expect(await store.apiKeys.getApiKey('tgkid_nobody')).toBeNull();
    });

    it('removing an org tenant removes its clients and their keys', async () => {
      const store = current();
      const user = await store.users.createUser(newUser());
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      await store.tenants.upsertTenant(orgTenant('globex'), NOW);
      await store.memberships.addMember('acme', user.id);
      const client = (await store.clients.createClient(newClient('acme')))!;
      const key = (await store.apiKeys.createApiKey(newKey(client.clientId)))!;
      const bare = (await store.clients.createClient(newClient('acme')))!;
      const kept = (await store.clients.createClient(newClient('globex')))!;
      const keptKey = (await store.apiKeys.createApiKey(newKey(kept.clientId)))!;

      expect(await store.tenants.removeOrgTenant('acme')).toEqual([user.id]);
      expect(await store.clients.getClient(client.clientId)).toBeNull();
      expect(await store.clients.getClient(bare.clientId)).toBeNull();
      expect(await store.apiKeys.getApiKey(key.keyId)).toBeNull();
      expect(await store.clients.listClients('acme')).toEqual([]);
      expect(await store.apiKeys.listApiKeys(client.clientId)).toEqual([]);
      // Created again under the id, the tenant has none of them back.
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      expect(await store.clients.listClients('acme')).toEqual([]);
      expect(await store.clients.getClient(kept.clientId)).toEqual(kept);
      expect(await store.apiKeys.getApiKey(keptKey.keyId)).toEqual(keptKey);
    });
  });
}
