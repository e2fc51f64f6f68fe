/**
 * The store contract for machine clients, their API keys and members' roles
 * (issue 32): what each backend keeps, that every change takes a new
 * generation, that a rotation leaves the old digest unknown, and that a
 * tenant's removal takes its clients and keys along. Registered by
 * `describeStoreContract`.
 */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import type { NewApiKey, NewClient, Store } from '../../src/store/types.js';
import { distinct, newUser, NOW, orgTenant, watchLive } from './store-fixtures.js';

let serial = 0;

function newClient(tenantId: string, overrides: Partial<NewClient> = {}): NewClient {
  serial++;
  return {
    clientId: `tgc_contract${String(serial).padStart(4, '0')}${Math.random().toString(36).slice(2, 8)}`,
    tenantId,
    name: `client ${serial}`,
    scopes: ['orders:write', 'orders:read', 'orders:read'],
    secretDigest: 'a'.repeat(64),
    createdAt: NOW,
    ...overrides,
  };
}

function newKey(clientId: string, overrides: Partial<NewApiKey> = {}): NewApiKey {
  serial++;
  return {
    keyId: `tgkid_k${String(serial).padStart(4, '0')}${Math.random().toString(36).slice(2, 8)}`,
    clientId,
    digest: 'b'.repeat(64),
    createdAt: NOW,
    ...overrides,
  };
}

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

  describe('roles', () => {
    it('makes a user admin of their personal tenant', async () => {
      const store = current();
      const user = await store.users.createUser(newUser());
      expect(await store.memberships.getMemberRole(user.personalTenantId, user.id)).toBe('admin');
    });

    it('defaults to admin for the tenant’s creator, member for anyone else', async () => {
      const store = current();
      const creator = await store.users.createUser(newUser({ email: 'Boss@Example.com' }));
      const other = await store.users.createUser(newUser());
      await store.tenants.upsertTenant(orgTenant('acme', { createdBy: 'boss@example.com' }), NOW);
      await store.memberships.addMember('acme', creator.id);
      await store.memberships.addMember('acme', other.id);
      expect(await store.memberships.getMemberRole('acme', creator.id)).toBe('admin');
      expect(await store.memberships.getMemberRole('acme', other.id)).toBe('member');
      expect(await store.memberships.getMemberRole('acme', 'u-nobody')).toBeNull();
      expect(await store.memberships.getMemberRole('nowhere', other.id)).toBeNull();
    });

    it('takes the role given when the membership begins, and keeps it when added again', async () => {
      const store = current();
      const creator = await store.users.createUser(newUser({ email: 'boss@example.com' }));
      const other = await store.users.createUser(newUser());
      await store.tenants.upsertTenant(orgTenant('acme', { createdBy: 'boss@example.com' }), NOW);
      await store.memberships.addMember('acme', creator.id, 'member');
      await store.memberships.addMember('acme', other.id, 'admin');
      await store.memberships.addMember('acme', other.id, 'member');
      expect(await store.memberships.getMemberRole('acme', creator.id)).toBe('member');
      expect(await store.memberships.getMemberRole('acme', other.id)).toBe('admin');
    });

    it('a role change takes a new generation and ends the old one on every watcher', async () => {
      const store = current();
      const user = await store.users.createUser(newUser());
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      await store.memberships.addMember('acme', user.id);
      const before = await store.memberships.membershipForToken('acme', user.id);
      const { events, stop } = await watchLive(store);
      try {
        expect(await store.memberships.setMemberRole('acme', user.id, 'admin')).toBe(true);
        const after = await store.memberships.membershipForToken('acme', user.id);
        expect(after!.generation).toBeGreaterThan(before!.generation);
        expect(await store.memberships.getMemberRole('acme', user.id)).toBe('admin');
        // What the role change published: the add's own event may still be on its way
        // (on Cluster it comes from another node), and is not the subject here.
        const sinceChange = () =>
          distinct(events).filter(
            (e) => 'generation' in e && (e.generation ?? 0) > before!.generation,
          );
        expect(sinceChange()).toEqual([
          {
            kind: 'membership-added',
            userId: user.id,
            tenantId: 'acme',
            generation: after!.generation,
          },
        ]);
        // The same role again changes nothing, and says so.
        expect(await store.memberships.setMemberRole('acme', user.id, 'admin')).toBe(false);
        expect(await store.memberships.membershipForToken('acme', user.id)).toEqual(after);
        expect(sinceChange()).toHaveLength(1);
      } finally {
        stop();
      }
      expect(await store.memberships.setMemberRole('acme', 'u-nobody', 'admin')).toBeNull();
      expect(await store.memberships.getMemberRole('acme', 'u-nobody')).toBeNull();
    });

    it('a membership removed and added back starts from the default role', async () => {
      const store = current();
      const user = await store.users.createUser(newUser());
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      await store.memberships.addMember('acme', user.id, 'admin');
      await store.memberships.removeMember('acme', user.id);
      await store.memberships.addMember('acme', user.id);
      expect(await store.memberships.getMemberRole('acme', user.id)).toBe('member');
    });
  });
}
