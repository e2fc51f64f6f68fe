/**
 * The store contract for the users slice (`Store.users`): accounts, their e-mails, passwords and session versions.
 * Registered by `describeStoreContract`.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/types.js';
import { newUser, NOW, rejectionOf, storeOf } from './store-fixtures.js';

/** @param current the store of the running test (a fresh one each). */
export function describeUserContract(current: () => Store): void {
  const store = storeOf(current);

  describe('users', () => {
    it('creates a user with a normalised e-mail and session version 0', async () => {
      const input = newUser({ email: '  Alice.Smith@Example.COM ' });
      const created = await store.users.createUser(input);
      expect(created).toEqual({
        id: input.id,
        email: 'alice.smith@example.com',
        name: input.name,
        passwordHash: input.passwordHash,
        sessionVersion: 0,
        personalTenantId: input.personalTenant.tenantId,
        createdAt: NOW,
      });
      expect(await store.users.getUser(input.id)).toEqual(created);
    });

    it('keeps the identity provider that created a user', async () => {
      const createdByIdp = { tenantId: 'acme', issuer: 'https://idp.acme.test' };
      const input = { ...newUser({ email: 'federated@example.com' }), createdByIdp };
      expect((await store.users.createUser(input)).createdByIdp).toEqual(createdByIdp);
      expect((await store.users.getUser(input.id))?.createdByIdp).toEqual(createdByIdp);
      expect((await store.users.findUserByEmail(input.email))?.createdByIdp).toEqual(createdByIdp);
    });

    it('finds a user by e-mail in any letter case', async () => {
      const created = await store.users.createUser(newUser({ email: 'bob@example.com' }));
      expect(await store.users.findUserByEmail('BOB@Example.Com')).toEqual(created);
      expect(await store.users.findUserByEmail(' bob@example.com\t')).toEqual(created);
      expect(await store.users.findUserByEmail('bob@example.org')).toBeNull();
    });

    it('keeps a user without a name without one', async () => {
      const input = newUser();
      delete input.name;
      await store.users.createUser(input);
      const user = await store.users.getUser(input.id);
      expect(user?.id).toBe(input.id);
      expect(user).not.toHaveProperty('name');
    });

    it('returns null for an unknown user', async () => {
      expect(await store.users.getUser('u-nobody')).toBeNull();
      expect(await store.users.getSessionVersion('u-nobody')).toBeNull();
    });

    it('refuses a taken e-mail in other letter case and writes nothing', async () => {
      const first = await store.users.createUser(newUser({ email: 'carol@example.com' }));
      const second = newUser({ email: 'Carol@EXAMPLE.com' });
      const err = await rejectionOf(store.users.createUser(second));
      expect(err.code).toBe('user_exists');
      expect(err.status).toBe(409);
      expect(err.message).toBe('A user with this e-mail already exists.');
      expect(await store.users.getUser(second.id)).toBeNull();
      expect(await store.tenants.getTenant(second.personalTenant.tenantId)).toBeNull();
      expect(await store.memberships.listUserTenants(second.id)).toEqual([]);
      expect(await store.memberships.listMembers(second.personalTenant.tenantId)).toEqual([]);
      expect(await store.users.findUserByEmail('carol@example.com')).toEqual(first);
      expect((await store.users.listUsers()).map((u) => u.id)).toEqual([first.id]);
      expect((await store.tenants.listTenants()).map((t) => t.tenantId)).toEqual([
        first.personalTenantId,
      ]);
    });

    it('lets exactly one of two concurrent sign-ups with one e-mail win', async () => {
      const results = await Promise.allSettled([
        store.users.createUser(newUser({ email: 'dave@example.com' })),
        store.users.createUser(newUser({ email: 'DAVE@example.com' })),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
      const rejected = results.find((r) => r.status === 'rejected');
      expect((rejected as PromiseRejectedResult).reason).toMatchObject({ code: 'user_exists' });
      expect(await store.users.listUsers()).toHaveLength(1);
      expect(await store.tenants.listTenants()).toHaveLength(1);
    });

    it('refuses a user id or personal tenant id already in use and writes nothing', async () => {
      const first = await store.users.createUser(newUser());
      const sameId = newUser({ id: first.id });
      expect((await rejectionOf(store.users.createUser(sameId))).code).toBe('internal_error');
      expect(await store.users.findUserByEmail(sameId.email)).toBeNull();
      expect(await store.tenants.getTenant(sameId.personalTenant.tenantId)).toBeNull();

      const sameTenant = newUser({}, first.personalTenantId);
      expect((await rejectionOf(store.users.createUser(sameTenant))).code).toBe('internal_error');
      expect(await store.users.getUser(sameTenant.id)).toBeNull();
      expect(await store.users.findUserByEmail(sameTenant.email)).toBeNull();
      expect(await store.memberships.listMembers(first.personalTenantId)).toEqual([first.id]);
      expect(await store.users.getUser(first.id)).toEqual(first);
    });

    it('creates the personal tenant, lists it for the user, with the user as member', async () => {
      const input = newUser();
      await store.users.createUser(input);
      const tenant = input.personalTenant;
      expect(await store.tenants.getTenant(tenant.tenantId)).toEqual(tenant);
      expect(await store.memberships.listUserTenants(input.id)).toEqual([tenant]);
      expect(await store.memberships.isMember(tenant.tenantId, input.id)).toBe(true);
      expect(await store.memberships.listMembers(tenant.tenantId)).toEqual([input.id]);
      expect(await store.tenants.listTenants()).toEqual([tenant]);
    });

    it('lists users sorted by id', async () => {
      expect(await store.users.listUsers()).toEqual([]);
      for (const id of ['u-b', 'u-C', 'u-a']) {
        await store.users.createUser(newUser({ id }));
      }
      // Code-unit order, whatever the locale: upper case before lower case.
      expect((await store.users.listUsers()).map((u) => u.id)).toEqual(['u-C', 'u-a', 'u-b']);
    });
  });

  describe('passwords and session versions', () => {
    it('setPasswordHash replaces the hash and bumps the version each time', async () => {
      const user = await store.users.createUser(newUser());
      expect(await store.users.getSessionVersion(user.id)).toBe(0);
      expect(await store.users.setPasswordHash(user.id, '$2b$10$second')).toBe(1);
      expect(await store.users.setPasswordHash(user.id, '$2b$10$third')).toBe(2);
      expect(await store.users.getSessionVersion(user.id)).toBe(2);
      expect(await store.users.getUser(user.id)).toEqual({
        ...user,
        passwordHash: '$2b$10$third',
        sessionVersion: 2,
      });
    });

    it('setPasswordHash with ifVersion writes once of many concurrent writers of that version', async () => {
      const user = await store.users.createUser(newUser());
      const hashes = Array.from({ length: 16 }, (_, i) => `$2b$10$raced${i}`);
      const versions = await Promise.all(
        hashes.map((hash) => store.users.setPasswordHash(user.id, hash, 0)),
      );
      expect(versions.filter((v) => v !== null)).toEqual([1]);
      const won = hashes[versions.indexOf(1)];
      expect(await store.users.getUser(user.id)).toEqual({
        ...user,
        passwordHash: won,
        sessionVersion: 1,
      });
      // Another version writes nothing; the current one writes.
      expect(await store.users.setPasswordHash(user.id, '$2b$10$stale', 0)).toBeNull();
      expect(await store.users.setPasswordHash(user.id, '$2b$10$next', 1)).toBe(2);
      expect(await store.users.setPasswordHash('u-nobody', '$2b$10$x', 0)).toBeNull();
      expect(await store.users.getUser('u-nobody')).toBeNull();
    });

    it('setPasswordHash returns null for an unknown user and creates nothing', async () => {
      expect(await store.users.setPasswordHash('u-nobody', '$2b$10$x')).toBeNull();
      expect(await store.users.getUser('u-nobody')).toBeNull();
      expect(await store.users.getSessionVersion('u-nobody')).toBeNull();
      expect(await store.users.listUsers()).toEqual([]);
    });

    it('replacePasswordHash applies only over the expected hash, keeping the version', async () => {
      const user = await store.users.createUser(newUser());
      expect(await store.users.replacePasswordHash(user.id, '$2b$10$stale', '$2b$12$new')).toBe(
        false,
      );
      expect((await store.users.getUser(user.id))?.passwordHash).toBe(user.passwordHash);

      expect(await store.users.replacePasswordHash(user.id, user.passwordHash, '$2b$12$new')).toBe(
        true,
      );
      expect(await store.users.getUser(user.id)).toEqual({ ...user, passwordHash: '$2b$12$new' });
      expect(await store.users.getSessionVersion(user.id)).toBe(0);

      expect(
        await store.users.replacePasswordHash(user.id, user.passwordHash, '$2b$12$again'),
      ).toBe(false);
      expect(await store.users.replacePasswordHash('u-nobody', '', '$2b$12$x')).toBe(false);
      expect(await store.users.getUser('u-nobody')).toBeNull();
    });

    it('markEmailVerified keeps the first time, survives a read and is false for nobody', async () => {
      const user = await store.users.createUser(newUser());
      expect(user.emailVerifiedAt).toBeUndefined();
      expect(await store.users.markEmailVerified(user.id, 1_700_000_000)).toBe(true);
      expect(await store.users.markEmailVerified(user.id, 1_800_000_000)).toBe(true);
      expect(await store.users.getUser(user.id)).toEqual({
        ...user,
        emailVerifiedAt: 1_700_000_000,
      });
      expect((await store.users.findUserByEmail(user.email))?.emailVerifiedAt).toBe(1_700_000_000);
      expect(await store.users.markEmailVerified('u-nobody', 1)).toBe(false);
      expect(await store.users.getUser('u-nobody')).toBeNull();
    });

    it('a user created verified reads back verified', async () => {
      const user = await store.users.createUser({ ...newUser(), emailVerifiedAt: 1_650_000_000 });
      expect(user.emailVerifiedAt).toBe(1_650_000_000);
      expect((await store.users.getUser(user.id))?.emailVerifiedAt).toBe(1_650_000_000);
    });
  });
}
