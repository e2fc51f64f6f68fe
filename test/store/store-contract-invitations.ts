/**
 * The store contract for the invitations slice (`Store.invitations`, issue
 * 45): pending invitations by tenant, found and taken by their token's
 * digest, taken once however many race, gone when expired or revoked.
 * Registered by `describeStoreContract`. Times are real (the Redis backend
 * lets a record expire with its invitation).
 */
import { describe, expect, it } from 'vitest';
import type { InvitationRecord, Store } from '../../src/store/types.js';
import { storeOf } from './store-fixtures.js';

const now = () => Math.floor(Date.now() / 1000);
let counter = 0;

/** A pending invitation of `tenantId`, valid an hour unless told. */
export function newInvitation(
  tenantId = 'acme',
  overrides: Partial<InvitationRecord> = {},
): InvitationRecord {
  counter++;
  const digest = `${counter.toString(16).padStart(8, '0')}${'e'.repeat(56)}`;
  return {
    id: `inv_${counter}_${tenantId}`,
    tenantId,
    email: `invitee-${counter}@example.com`,
    role: 'member',
    createdAt: now() - 10 + counter,
    expiresAt: now() + 3600,
    invitedBy: 'admin@example.com',
    tokenDigest: digest,
    ...overrides,
  };
}

/** @param current the store of the running test (a fresh one each). */
export function describeInvitationContract(current: () => Store): void {
  const store = storeOf(current);

  describe('invitations', () => {
    it('lists a tenant’s pending invitations, oldest first, and only its own', async () => {
      const first = newInvitation('acme');
      const second = newInvitation('acme', { role: 'admin' });
      const other = newInvitation('globex');
      for (const record of [second, first, other]) {
        expect(await store.invitations.addInvitation(record, 10)).toBe(true);
      }
      expect(await store.invitations.listInvitations('acme', now())).toEqual([first, second]);
      expect(await store.invitations.listInvitations('globex', now())).toEqual([other]);
      expect(await store.invitations.listInvitations('nobody', now())).toEqual([]);
    });

    it('finds by the digest without using it up; takes it once', async () => {
      const record = newInvitation();
      await store.invitations.addInvitation(record, 10);
      expect(await store.invitations.findInvitation(record.tokenDigest, now())).toEqual(record);
      expect(await store.invitations.findInvitation(record.tokenDigest, now())).toEqual(record);
      expect(await store.invitations.takeInvitation(record.tokenDigest, now())).toEqual(record);
      expect(await store.invitations.takeInvitation(record.tokenDigest, now())).toBeNull();
      expect(await store.invitations.findInvitation(record.tokenDigest, now())).toBeNull();
      expect(await store.invitations.listInvitations('acme', now())).toEqual([]);
      expect(await store.invitations.findInvitation('f'.repeat(64), now())).toBeNull();
    });

    it('of concurrent takers of one invitation, exactly one gets it', async () => {
      const record = newInvitation();
      await store.invitations.addInvitation(record, 10);
      const taken = await Promise.all(
        Array.from({ length: 8 }, () =>
          store.invitations.takeInvitation(record.tokenDigest, now()),
        ),
      );
      expect(taken.filter((t) => t !== null)).toEqual([record]);
    });

    it('an expired invitation is neither found, taken nor listed', async () => {
      const record = newInvitation('acme', { expiresAt: now() + 30 });
      await store.invitations.addInvitation(record, 10);
      const later = now() + 30;
      expect(await store.invitations.findInvitation(record.tokenDigest, later)).toBeNull();
      expect(await store.invitations.listInvitations('acme', later)).toEqual([]);
      expect(await store.invitations.takeInvitation(record.tokenDigest, later)).toBeNull();
    });

    it('revokes by tenant and id only: another tenant’s id is not found', async () => {
      const record = newInvitation('acme');
      await store.invitations.addInvitation(record, 10);
      expect(await store.invitations.removeInvitation('globex', record.id)).toBeNull();
      expect(await store.invitations.findInvitation(record.tokenDigest, now())).toEqual(record);
      expect(await store.invitations.removeInvitation('acme', record.id)).toEqual(record);
      expect(await store.invitations.removeInvitation('acme', record.id)).toBeNull();
      expect(await store.invitations.findInvitation(record.tokenDigest, now())).toBeNull();
      expect(await store.invitations.takeInvitation(record.tokenDigest, now())).toBeNull();
    });

    it('refuses past the most pending invitations a tenant may hold', async () => {
      expect(await store.invitations.addInvitation(newInvitation('acme'), 2)).toBe(true);
      expect(await store.invitations.addInvitation(newInvitation('acme'), 2)).toBe(true);
      const refused = newInvitation('acme');
      expect(await store.invitations.addInvitation(refused, 2)).toBe(false);
      expect(await store.invitations.findInvitation(refused.tokenDigest, now())).toBeNull();
      expect(await store.invitations.addInvitation(newInvitation('globex'), 2)).toBe(true);
    });
  });
}
