/**
 * The store contract for users' TOTP (issue 45): a pending enrolment beside
 * a confirmed factor, a confirmation that replaces the factor and its
 * recovery codes whole, a time step accepted once (also when two requests
 * race with one code), a recovery code taken once (likewise), and removal,
 * with the user too. Registered by `describeStoreContract`.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/types.js';
import { newUser, NOW } from './store-fixtures.js';

const DIGESTS = ['d1', 'd2', 'd3'];

/** A user with a confirmed factor sealed as `sealed`, its last step 100. */
async function enrolled(store: Store, sealed = 'sealed-1'): Promise<string> {
  const user = await store.users.createUser(newUser());
  expect(await store.totp.putPendingTotp(user.id, { secretSealed: sealed, createdAt: NOW })).toBe(
    true,
  );
  expect(
    await store.totp.confirmTotp(user.id, sealed, { step: 100, recoveryDigests: DIGESTS, at: NOW }),
  ).toBe(true);
  return user.id;
}

/** @param current the store of the running test (a fresh one each). */
export function describeTotpContract(current: () => Store): void {
  describe('TOTP second factors', () => {
    it('keeps a pending enrolment, then the confirmed factor with its codes counted', async () => {
      const store = current();
      const user = await store.users.createUser(newUser());
      expect(await store.totp.getTotp(user.id)).toBeNull();
      await store.totp.putPendingTotp(user.id, { secretSealed: 'old', createdAt: NOW });
      await store.totp.putPendingTotp(user.id, { secretSealed: 'sealed-1', createdAt: NOW + 1 });
      expect(await store.totp.getTotp(user.id)).toEqual({
        userId: user.id,
        lastStep: 0,
        recoveryCodesLeft: 0,
        pending: { secretSealed: 'sealed-1', createdAt: NOW + 1 },
      });
      // Only the latest pending enrolment confirms.
      expect(
        await store.totp.confirmTotp(user.id, 'old', { step: 1, recoveryDigests: [], at: NOW }),
      ).toBe(false);
      expect(
        await store.totp.confirmTotp(user.id, 'sealed-1', {
          step: 100,
          recoveryDigests: DIGESTS,
          at: NOW + 2,
        }),
      ).toBe(true);
      expect(await store.totp.getTotp(user.id)).toEqual({
        userId: user.id,
        secretSealed: 'sealed-1',
        confirmedAt: NOW + 2,
        lastStep: 100,
        recoveryCodesLeft: 3,
      });
      expect(
        await store.totp.confirmTotp(user.id, 'sealed-1', {
          step: 1,
          recoveryDigests: [],
          at: NOW,
        }),
      ).toBe(false);
    });

    it('writes no pending enrolment for a user that does not exist', async () => {
      const store = current();
      expect(
        await store.totp.putPendingTotp('u-nobody', { secretSealed: 's', createdAt: NOW }),
      ).toBe(false);
      expect(await store.totp.getTotp('u-nobody')).toBeNull();
    });

    it('a new enrolment leaves the confirmed factor in force until it is confirmed, then replaces it and its codes', async () => {
      const store = current();
      const userId = await enrolled(store);
      await store.totp.putPendingTotp(userId, { secretSealed: 'sealed-2', createdAt: NOW + 5 });
      const during = await store.totp.getTotp(userId);
      expect(during?.secretSealed).toBe('sealed-1');
      expect(during?.recoveryCodesLeft).toBe(3);
      expect(await store.totp.acceptTotpStep(userId, 101)).toBe(true);
      await store.totp.confirmTotp(userId, 'sealed-2', {
        step: 200,
        recoveryDigests: ['e1'],
        at: NOW + 6,
      });
      const after = await store.totp.getTotp(userId);
      expect([after?.secretSealed, after?.lastStep, after?.recoveryCodesLeft]).toEqual([
        'sealed-2',
        200,
        1,
      ]);
      expect(after?.pending).toBeUndefined();
      expect(await store.totp.takeRecoveryCode(userId, 'd1')).toBe(false);
      expect(await store.totp.takeRecoveryCode(userId, 'e1')).toBe(true);
    });

    it('accepts a time step only later than the last one, once when two race', async () => {
      const store = current();
      const userId = await enrolled(store);
      expect(await store.totp.acceptTotpStep(userId, 100)).toBe(false);
      expect(await store.totp.acceptTotpStep(userId, 99)).toBe(false);
      const raced = await Promise.all([
        store.totp.acceptTotpStep(userId, 101),
        store.totp.acceptTotpStep(userId, 101),
      ]);
      expect(raced.filter(Boolean)).toHaveLength(1);
      expect((await store.totp.getTotp(userId))?.lastStep).toBe(101);
      // A pending enrolment alone accepts nothing.
      const pendingOnly = await store.users.createUser(newUser());
      await store.totp.putPendingTotp(pendingOnly.id, { secretSealed: 's', createdAt: NOW });
      expect(await store.totp.acceptTotpStep(pendingOnly.id, 5)).toBe(false);
    });

    it('takes a recovery code once, also when two race', async () => {
      const store = current();
      const userId = await enrolled(store);
      const raced = await Promise.all([
        store.totp.takeRecoveryCode(userId, 'd2'),
        store.totp.takeRecoveryCode(userId, 'd2'),
      ]);
      expect(raced.filter(Boolean)).toHaveLength(1);
      expect(await store.totp.takeRecoveryCode(userId, 'unknown')).toBe(false);
      expect((await store.totp.getTotp(userId))?.recoveryCodesLeft).toBe(2);
      const other = await enrolled(store);
      expect(await store.totp.takeRecoveryCode(other, 'd2')).toBe(true);
    });

    it('removes the factor, and with the user', async () => {
      const store = current();
      const userId = await enrolled(store);
      expect(await store.totp.removeTotp(userId)).toBe(true);
      expect(await store.totp.getTotp(userId)).toBeNull();
      expect(await store.totp.removeTotp(userId)).toBe(false);
      expect(await store.totp.takeRecoveryCode(userId, 'd1')).toBe(false);
      const removed = await enrolled(store);
      await store.users.removeUser(removed);
      expect(await store.totp.getTotp(removed)).toBeNull();
    });
  });
}
