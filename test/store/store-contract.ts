/**
 * The one behaviour every store backend must have, run against each of them
 * (`*.test.ts` next to this file). A backend passes only if it is
 * indistinguishable from the others through the `Store` interface.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import type { Store } from '../../src/store/types.js';
import { describeAuditContract } from './store-contract-audit.js';
import { describeClientContract } from './store-contract-clients.js';
import { describeRefreshContract } from './store-contract-refresh.js';
import { describeDomainContract } from './store-contract-domains.js';
import { describeIdpContract, describeSsoRecordsContract } from './store-contract-idp.js';
import { describeRemovalContract } from './store-contract-removal.js';
import { distinct, newUser, NOW, orgTenant, sleep, watchLive } from './store-fixtures.js';

export { newUser } from './store-fixtures.js';

/** A fresh, empty store and how to dispose of it. */
export type MakeStore = () => Promise<{ store: Store; cleanup(): Promise<void> }>;

async function rejectionOf(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error('expected the call to reject');
}

/** Registers the store contract suite for one backend. */
export function describeStoreContract(name: string, makeStore: MakeStore): void {
  describe(`Store contract: ${name}`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ store, cleanup } = await makeStore());
    });

    afterEach(async () => {
      await cleanup();
    });

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
        expect((await store.users.findUserByEmail(input.email))?.createdByIdp).toEqual(
          createdByIdp,
        );
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

        expect(
          await store.users.replacePasswordHash(user.id, user.passwordHash, '$2b$12$new'),
        ).toBe(true);
        expect(await store.users.getUser(user.id)).toEqual({ ...user, passwordHash: '$2b$12$new' });
        expect(await store.users.getSessionVersion(user.id)).toBe(0);

        expect(
          await store.users.replacePasswordHash(user.id, user.passwordHash, '$2b$12$again'),
        ).toBe(false);
        expect(await store.users.replacePasswordHash('u-nobody', '', '$2b$12$x')).toBe(false);
        expect(await store.users.getUser('u-nobody')).toBeNull();
      });
    });

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

    describe('memberships', () => {
      it('adds a member idempotently, both ways', async () => {
        const user = await store.users.createUser(newUser());
        await store.tenants.upsertTenant(orgTenant('acme'), NOW);
        expect(await store.memberships.isMember('acme', user.id)).toBe(false);
        expect(await store.memberships.addMember('acme', user.id)).toBe(true);
        expect(await store.memberships.addMember('acme', user.id)).toBe(true);
        expect(await store.memberships.isMember('acme', user.id)).toBe(true);
        expect(await store.memberships.listMembers('acme')).toEqual([user.id]);
        expect((await store.memberships.listUserTenants(user.id)).map((t) => t.tenantId)).toEqual([
          'acme',
          user.personalTenantId,
        ]);
      });

      it('refuses an unknown user or tenant, creating nothing', async () => {
        const user = await store.users.createUser(newUser());
        await store.tenants.upsertTenant(orgTenant('acme'), NOW);
        expect(await store.memberships.addMember('acme', 'u-nobody')).toBe(false);
        expect(await store.memberships.addMember('nope', user.id)).toBe(false);
        expect(await store.memberships.isMember('acme', 'u-nobody')).toBe(false);
        expect(await store.memberships.isMember('nope', user.id)).toBe(false);
        expect(await store.memberships.listMembers('acme')).toEqual([]);
        expect(await store.memberships.listMembers('nope')).toEqual([]);
        expect(await store.memberships.listUserTenants('u-nobody')).toEqual([]);
        expect((await store.memberships.listUserTenants(user.id)).map((t) => t.tenantId)).toEqual([
          user.personalTenantId,
        ]);
      });

      it('removes a member idempotently, both ways', async () => {
        const user = await store.users.createUser(newUser());
        await store.tenants.upsertTenant(orgTenant('acme'), NOW);
        await store.memberships.addMember('acme', user.id);
        expect(await store.memberships.removeMember('acme', user.id)).toBe(true);
        expect(await store.memberships.removeMember('acme', user.id)).toBe(false);
        expect(await store.memberships.removeMember('nope', 'u-nobody')).toBe(false);
        expect(await store.memberships.isMember('acme', user.id)).toBe(false);
        expect(await store.memberships.listMembers('acme')).toEqual([]);
        expect((await store.memberships.listUserTenants(user.id)).map((t) => t.tenantId)).toEqual([
          user.personalTenantId,
        ]);
        expect(await store.tenants.getTenant('acme')).not.toBeNull();
      });

      it("lists a user's tenants as full records sorted by tenant id", async () => {
        const user = await store.users.createUser(newUser({}, 'p-personal'));
        for (const id of ['org-b', 'org-C', 'org-a']) {
          await store.tenants.upsertTenant(orgTenant(id), NOW);
          await store.memberships.addMember(id, user.id);
        }
        const tenants = await store.memberships.listUserTenants(user.id);
        expect(tenants.map((t) => t.tenantId)).toEqual(['org-C', 'org-a', 'org-b', 'p-personal']);
        expect(tenants[1]).toEqual({ ...orgTenant('org-a'), createdAt: NOW, modifiedAt: NOW });
      });

      it('lists members sorted by user id', async () => {
        await store.tenants.upsertTenant(orgTenant('acme'), NOW);
        for (const id of ['u-z', 'u-M', 'u-a']) {
          await store.users.createUser(newUser({ id }));
          await store.memberships.addMember('acme', id);
        }
        expect(await store.memberships.listMembers('acme')).toEqual(['u-M', 'u-a', 'u-z']);
      });
    });

    describe('membership generations', () => {
      const generationOf = async (tenantId: string, userId: string) =>
        (await store.memberships.readMembership(tenantId, userId)).membership?.generation;

      it('a membership has a generation, the one a token is issued under', async () => {
        const user = await store.users.createUser(newUser());
        await store.tenants.upsertTenant(orgTenant('acme'), NOW);
        const personal = await store.memberships.readMembership(user.personalTenantId, user.id);
        expect(personal.membership?.generation).toBeGreaterThan(0);
        expect(personal.asOf).toBeGreaterThanOrEqual(personal.membership?.generation as number);
        expect(await store.memberships.membershipForToken(user.personalTenantId, user.id)).toEqual(
          personal.membership,
        );

        expect(await store.memberships.addMember('acme', user.id)).toBe(true);
        const acme = await store.memberships.membershipForToken('acme', user.id);
        expect(acme?.generation).toBeGreaterThan(personal.membership?.generation as number);
        expect(await store.memberships.readMembership('acme', user.id)).toEqual({
          membership: acme,
          asOf: acme?.generation,
        });
        // Adding again changes nothing.
        expect(await store.memberships.addMember('acme', user.id)).toBe(true);
        expect(await store.memberships.readMembership('acme', user.id)).toEqual({
          membership: acme,
          asOf: acme?.generation,
        });
      });

      it('no membership, no generation: the state says as of when', async () => {
        const user = await store.users.createUser(newUser());
        await store.tenants.upsertTenant(orgTenant('acme'), NOW);
        const { asOf } = await store.memberships.readMembership(user.personalTenantId, user.id);
        for (const [tenantId, userId] of [
          ['acme', user.id],
          ['nope', user.id],
          ['acme', 'u-nobody'],
        ] as const) {
          expect(await store.memberships.readMembership(tenantId, userId)).toEqual({
            membership: null,
            asOf,
          });
          expect(await store.memberships.membershipForToken(tenantId, userId)).toBeNull();
        }
      });

      it('a membership removed and added back has a new generation; the removal took one too', async () => {
        const user = await store.users.createUser(newUser());
        await store.tenants.upsertTenant(orgTenant('acme'), NOW);
        await store.memberships.addMember('acme', user.id);
        const first = (await generationOf('acme', user.id)) as number;
        await store.memberships.removeMember('acme', user.id);
        const removed = await store.memberships.readMembership('acme', user.id);
        expect(removed.membership).toBeNull();
        expect(removed.asOf).toBeGreaterThan(first);
        await store.memberships.addMember('acme', user.id);
        expect(await generationOf('acme', user.id)).toBeGreaterThan(removed.asOf);
      });

      it('a tenant removed and created again, or a user removed and signed up again, starts new generations', async () => {
        const user = await store.users.createUser(newUser({ email: 'again@example.com' }));
        await store.tenants.upsertTenant(orgTenant('acme'), NOW);
        await store.memberships.addMember('acme', user.id);
        const before = (await generationOf('acme', user.id)) as number;
        await store.tenants.removeOrgTenant('acme');
        await store.tenants.upsertTenant(orgTenant('acme'), NOW);
        await store.memberships.addMember('acme', user.id);
        const recreated = (await generationOf('acme', user.id)) as number;
        expect(recreated).toBeGreaterThan(before);

        await store.users.removeUser(user.id);
        const again = await store.users.createUser(newUser({ email: 'again@example.com' }));
        await store.memberships.addMember('acme', again.id);
        expect(await generationOf('acme', again.id)).toBeGreaterThan(recreated);
        expect(await generationOf(again.personalTenantId, again.id)).toBeGreaterThan(recreated);
      });

      it('generations only grow, whichever pair changes', async () => {
        await store.tenants.upsertTenant(orgTenant('acme'), NOW);
        let last = 0;
        for (let i = 0; i < 3; i++) {
          const user = await store.users.createUser(newUser());
          for (const change of [
            () => store.memberships.addMember('acme', user.id),
            () => store.memberships.removeMember('acme', user.id),
          ]) {
            await change();
            const { asOf } = await store.memberships.readMembership('acme', user.id);
            expect(asOf).toBeGreaterThan(last);
            last = asOf;
          }
        }
      });
    });

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

    describe('rate limiters', () => {
      it('count attempts per key, report the wait past the limit, and reset', async () => {
        const limiter = store.loginCounter({
          name: `rl-${randomUUID()}`,
          points: 2,
          windowSeconds: 60,
        });
        expect(await limiter.retryAfter('k')).toBe(0);
        expect(await limiter.hit('k')).toBe(0);
        expect(await limiter.retryAfter('k')).toBe(0);
        const wait = await limiter.hit('k');
        expect(wait).toBeGreaterThan(0);
        expect(wait).toBeLessThanOrEqual(60);
        expect(await limiter.retryAfter('k')).toBeGreaterThan(0);
        expect(await limiter.retryAfter('other')).toBe(0);
        await limiter.reset('k');
        expect(await limiter.retryAfter('k')).toBe(0);
      });
    });

    describeRemovalContract(() => store);
    describeAuditContract(() => store);
    describeClientContract(() => store);
    describeRefreshContract(() => store);
    describeIdpContract(() => store);
    describeDomainContract(() => store);
    describeSsoRecordsContract(() => store);

    describe('lifecycle', () => {
      it('answers ping while open, refuses with unavailable once closed', async () => {
        await expect(store.ping()).resolves.toBeUndefined();
        await store.close();
        const err = await rejectionOf(store.ping());
        expect(err.code).toBe('unavailable');
        expect(err.status).toBe(503);
        expect((await rejectionOf(store.users.getUser('u-any'))).code).toBe('unavailable');
        await expect(store.close()).resolves.toBeUndefined();
      });
    });
  });
}
