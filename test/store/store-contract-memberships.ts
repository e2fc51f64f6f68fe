/**
 * The store contract for the memberships slice (`Store.memberships`): who belongs to which tenant, their generations (what a token is good for) and roles.
 * Registered by `describeStoreContract`.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createAuditRecorder } from '../../src/audit/recorder.js';
import { GatewayError } from '../../src/errors.js';
import type { MemberActor } from '../../src/identity/actor.js';
import type { MemberDeps } from '../../src/identity/members.js';
import { removeTenantMember, setTenantMemberRole } from '../../src/identity/tenant-members.js';
import type { Store } from '../../src/store/types.js';
import {
  distinct,
  newUser,
  NOW,
  orgTenant,
  watchLive,
  storeOf,
  waitUntil,
} from './store-fixtures.js';

/** @param current the store of the running test (a fresh one each). */
export function describeMembershipContract(current: () => Store): void {
  const store = storeOf(current);

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

  describe('roles', () => {
    it('makes a user admin of their personal tenant', async () => {
      const user = await store.users.createUser(newUser());
      expect(await store.memberships.getMemberRole(user.personalTenantId, user.id)).toBe('admin');
    });

    it('defaults to admin for the tenant’s creator, member for anyone else', async () => {
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
      const user = await store.users.createUser(newUser());
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      await store.memberships.addMember('acme', user.id, 'admin');
      await store.memberships.removeMember('acme', user.id);
      await store.memberships.addMember('acme', user.id);
      expect(await store.memberships.getMemberRole('acme', user.id)).toBe('member');
    });

    it('lists the members with their roles and when each joined; a role change keeps the date', async () => {
      const [ann, bea] = await Promise.all([
        store.users.createUser(newUser()),
        store.users.createUser(newUser()),
      ]);
      await store.tenants.upsertTenant(orgTenant('acme'), NOW);
      const before = Math.floor(Date.now() / 1000);
      await store.memberships.addMember('acme', ann.id, 'admin');
      await store.memberships.addMember('acme', bea.id, 'member');
      const after = Math.floor(Date.now() / 1000);
      const listed = await store.memberships.listMemberships('acme');
      expect(listed.map((m) => m.userId)).toEqual([ann.id, bea.id].sort());
      for (const entry of listed) {
        expect(entry.role).toBe(entry.userId === ann.id ? 'admin' : 'member');
        expect(entry.joinedAt).toBeGreaterThanOrEqual(before);
        expect(entry.joinedAt).toBeLessThanOrEqual(after);
      }
      await store.memberships.setMemberRole('acme', bea.id, 'admin');
      await store.memberships.removeMember('acme', ann.id);
      expect(await store.memberships.listMemberships('acme')).toEqual([
        {
          userId: bea.id,
          role: 'admin',
          joinedAt: listed.find((m) => m.userId === bea.id)?.joinedAt,
        },
      ]);
      expect(await store.memberships.listMemberships('nope')).toEqual([]);
    });
  });

  describe('keeping an admin (`keepAnAdmin`)', () => {
    const keep = { keepAnAdmin: true } as const;

    /** A tenant with an admin (the creator's default role) and a member. */
    async function tenantOfTwo(): Promise<{ admin: string; member: string }> {
      const admin = await store.users.createUser(newUser({ email: 'keeper@example.com' }));
      const member = await store.users.createUser(newUser());
      await store.tenants.upsertTenant(orgTenant('acme', { createdBy: 'keeper@example.com' }), NOW);
      await store.memberships.addMember('acme', admin.id);
      await store.memberships.addMember('acme', member.id, 'member');
      return { admin: admin.id, member: member.id };
    }

    it('refuses to demote or remove the last admin, taking no generation and publishing nothing', async () => {
      const { admin, member } = await tenantOfTwo();
      const explicit = await store.users.createUser(newUser());
      await store.tenants.upsertTenant(orgTenant('globex'), NOW);
      await store.memberships.addMember('globex', explicit.id, 'admin');
      const before = await store.memberships.readMembership('acme', admin);
      const { events, stop } = await watchLive(store);
      try {
        for (const [tenantId, userId] of [
          ['acme', admin],
          ['globex', explicit.id],
        ] as const) {
          expect(await store.memberships.setMemberRole(tenantId, userId, 'member', keep)).toBe(
            'last-admin',
          );
          expect(await store.memberships.removeMember(tenantId, userId, keep)).toBe('last-admin');
          expect(await store.memberships.getMemberRole(tenantId, userId)).toBe('admin');
        }
        expect(await store.memberships.readMembership('acme', admin)).toEqual(before);
        expect((await store.memberships.readMembership('globex', explicit.id)).asOf).toBe(
          before.asOf,
        );
        // Another change publishes: what the refusals would have published came before it.
        expect(await store.memberships.setMemberRole('acme', member, 'admin')).toBe(true);
        const promoted = await store.memberships.readMembership('acme', member);
        expect(promoted.asOf).toBe(before.asOf + 1);
        const since = () =>
          distinct(events).filter((e) => 'generation' in e && (e.generation ?? 0) > before.asOf);
        await waitUntil(() => since().length > 0);
        expect(since()).toEqual([
          {
            kind: 'membership-added',
            userId: member,
            tenantId: 'acme',
            generation: promoted.membership?.generation,
          },
        ]);
      } finally {
        stop();
      }
    });

    it('allows it while another admin remains, and for a member whatever the admins', async () => {
      const { admin, member } = await tenantOfTwo();
      // A member is neither demoted nor the last admin: their removal goes.
      expect(await store.memberships.setMemberRole('acme', member, 'member', keep)).toBe(false);
      expect(await store.memberships.setMemberRole('acme', member, 'admin', keep)).toBe(true);
      expect(await store.memberships.setMemberRole('acme', admin, 'member', keep)).toBe(true);
      expect(await store.memberships.removeMember('acme', admin, keep)).toBe(true);
      expect(await store.memberships.removeMember('acme', member, keep)).toBe('last-admin');
      expect(await store.memberships.listMemberships('acme')).toEqual([
        expect.objectContaining({ userId: member, role: 'admin' }),
      ]);
      // Nobody there: as without the option.
      expect(await store.memberships.removeMember('acme', admin, keep)).toBe(false);
      expect(await store.memberships.setMemberRole('acme', admin, 'member', keep)).toBeNull();
    });

    it('without the option, the last admin goes as before (the operator’s verbs)', async () => {
      const { admin } = await tenantOfTwo();
      expect(await store.memberships.setMemberRole('acme', admin, 'member')).toBe(true);
      expect(await store.memberships.setMemberRole('acme', admin, 'admin')).toBe(true);
      expect(await store.memberships.removeMember('acme', admin)).toBe(true);
      expect(await store.memberships.isMember('acme', admin)).toBe(false);
    });
  });

  describe('the last admin under concurrent changes (the identity operations)', () => {
    const actor = (email: string): MemberActor => ({
      kind: 'member',
      role: 'admin',
      audit: { source: 'api', actor: email },
    });
    type Change = (deps: MemberDeps, by: string, of: string) => Promise<unknown>;
    const demote: Change = (deps, by, of) =>
      setTenantMemberRole(deps, actor(by), 'acme', of, 'member');
    const remove: Change = (deps, by, of) => removeTenantMember(deps, actor(by), 'acme', of);

    it.each([
      ['demote each other', demote, demote],
      ['remove each other', remove, remove],
      ['one removes, the other demotes', remove, demote],
    ])(
      'two admins %s at once: one wins, the other is refused, an admin stays',
      async (_, first, second) => {
        const deps: MemberDeps = {
          store,
          audit: createAuditRecorder({
            streams: store.auditLog({ maxEventsPerStream: 100 }),
            log: pino({ level: 'silent' }),
          }),
        };
        await store.tenants.upsertTenant(orgTenant('acme'), NOW);
        for (let round = 0; round < 20; round++) {
          const [a, b] = await Promise.all([
            store.users.createUser(newUser()),
            store.users.createUser(newUser()),
          ]);
          await store.memberships.addMember('acme', a.id, 'admin');
          await store.memberships.addMember('acme', b.id, 'admin');
          const outcomes = await Promise.allSettled([
            first(deps, a.id, b.id),
            second(deps, b.id, a.id),
          ]);
          const admins = (await store.memberships.listMemberships('acme')).filter(
            (m) => m.role === 'admin',
          );
          expect(admins, `round ${round}`).toHaveLength(1);
          expect(
            outcomes.filter((o) => o.status === 'fulfilled'),
            `round ${round}`,
          ).toHaveLength(1);
          const refused = outcomes.find((o) => o.status === 'rejected')?.reason as unknown;
          expect(refused).toBeInstanceOf(GatewayError);
          expect((refused as GatewayError).code).toBe('forbidden');
          expect((refused as GatewayError).message).toMatch(/^The tenant's last admin cannot be/);
          // The next round on a fresh pair: the survivor leaves.
          for (const { userId } of await store.memberships.listMemberships('acme')) {
            await store.memberships.removeMember('acme', userId);
          }
        }
      },
    );
  });
}
