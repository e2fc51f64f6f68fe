/**
 * The store contract for passkeys (issue 45): a credential id is stored once
 * (whoever holds it), a user holds a bounded number, a passkey is listed by
 * its user and found by its credential id, a sign-in writes its counter only
 * forwards (WebAuthn's cloned-authenticator rule) — also when two race — and
 * only its user removes it; the user's removal takes them all. Registered by
 * `describeStoreContract`.
 */
import { describe, expect, it } from 'vitest';
import { MAX_USER_PASSKEYS } from '../../src/store/passkeys.js';
import type { Store } from '../../src/store/types.js';
import { newPasskey, newUser, NOW } from './store-fixtures.js';

/** @param current the store of the running test (a fresh one each). */
export function describePasskeyContract(current: () => Store): void {
  describe('passkeys', () => {
    it('adds a passkey once, lists it by user (oldest first), finds it by credential id', async () => {
      const store = current();
      const alice = await store.users.createUser(newUser());
      const later = newPasskey(alice.id, { createdAt: NOW + 10, name: 'Phone' });
      const first = newPasskey(alice.id);
      expect(await store.passkeys.addPasskey(later)).toBe('added');
      expect(await store.passkeys.addPasskey(first)).toBe('added');
      expect(await store.passkeys.listPasskeys(alice.id)).toEqual([first, later]);
      expect(await store.passkeys.getPasskey(first.credentialId)).toEqual(first);
      expect(await store.passkeys.getPasskey('cred-none')).toBeNull();
      expect(await store.passkeys.listPasskeys('u-none')).toEqual([]);
    });

    it("refuses a credential id stored already (another user's too), a missing user, one too many", async () => {
      const store = current();
      const alice = await store.users.createUser(newUser());
      const bob = await store.users.createUser(newUser());
      const mine = newPasskey(alice.id);
      await store.passkeys.addPasskey(mine);
      const stolen = newPasskey(bob.id, { credentialId: mine.credentialId });
      expect(await store.passkeys.addPasskey(stolen)).toBe('credential_taken');
      expect(await store.passkeys.getPasskey(mine.credentialId)).toEqual(mine);
      expect(await store.passkeys.listPasskeys(bob.id)).toEqual([]);
      expect(await store.passkeys.addPasskey(newPasskey('u-none'))).toBe('no_user');
      for (let i = 1; i < MAX_USER_PASSKEYS; i++)
        expect(await store.passkeys.addPasskey(newPasskey(alice.id))).toBe('added');
      expect(await store.passkeys.addPasskey(newPasskey(alice.id))).toBe('too_many');
      expect(await store.passkeys.listPasskeys(alice.id)).toHaveLength(MAX_USER_PASSKEYS);
    });

    it('writes a counter only forwards, and accepts 0 after 0 (an authenticator without one)', async () => {
      const store = current();
      const alice = await store.users.createUser(newUser());
      const silent = newPasskey(alice.id);
      const counting = newPasskey(alice.id, { counter: 5 });
      await store.passkeys.addPasskey(silent);
      await store.passkeys.addPasskey(counting);
      expect(await store.passkeys.usePasskey(silent.credentialId, 0, NOW + 1)).toBe('used');
      expect(await store.passkeys.getPasskey(silent.credentialId)).toEqual({
        ...silent,
        lastUsedAt: NOW + 1,
      });
      expect(await store.passkeys.usePasskey(counting.credentialId, 5, NOW + 2)).toBe(
        'counter_regressed',
      );
      expect(await store.passkeys.usePasskey(counting.credentialId, 0, NOW + 2)).toBe(
        'counter_regressed',
      );
      expect(await store.passkeys.getPasskey(counting.credentialId)).toEqual(counting);
      expect(await store.passkeys.usePasskey(counting.credentialId, 6, NOW + 3)).toBe('used');
      expect((await store.passkeys.getPasskey(counting.credentialId))?.counter).toBe(6);
      // Once counting, back to 0 is a clone's.
      expect(await store.passkeys.usePasskey(silent.credentialId, 1, NOW + 4)).toBe('used');
      expect(await store.passkeys.usePasskey(silent.credentialId, 0, NOW + 5)).toBe(
        'counter_regressed',
      );
      expect(await store.passkeys.usePasskey('cred-none', 1, NOW)).toBe('missing');
    });

    it('of two sign-ins with the same counter, one wins', async () => {
      const store = current();
      const alice = await store.users.createUser(newUser());
      const passkey = newPasskey(alice.id, { counter: 1 });
      await store.passkeys.addPasskey(passkey);
      const uses = await Promise.all(
        [1, 2, 3, 4].map(() => store.passkeys.usePasskey(passkey.credentialId, 2, NOW + 1)),
      );
      expect(uses.filter((u) => u === 'used')).toHaveLength(1);
    });

    it('is removed by its user only; the user removed takes every passkey', async () => {
      const store = current();
      const alice = await store.users.createUser(newUser());
      const bob = await store.users.createUser(newUser());
      const [one, two] = [newPasskey(alice.id), newPasskey(alice.id)];
      await store.passkeys.addPasskey(one);
      await store.passkeys.addPasskey(two);
      expect(await store.passkeys.removePasskey(bob.id, one.passkeyId)).toBeNull();
      expect(await store.passkeys.getPasskey(one.credentialId)).toEqual(one);
      expect(await store.passkeys.removePasskey(alice.id, one.passkeyId)).toEqual(one);
      expect(await store.passkeys.removePasskey(alice.id, one.passkeyId)).toBeNull();
      expect(await store.passkeys.getPasskey(one.credentialId)).toBeNull();
      expect(await store.passkeys.usePasskey(one.credentialId, 1, NOW)).toBe('missing');
      expect(await store.passkeys.addPasskey(newPasskey(bob.id))).toBe('added');
      expect(await store.users.removeUser(alice.id)).toEqual([alice.personalTenantId]);
      expect(await store.passkeys.getPasskey(two.credentialId)).toBeNull();
      expect(await store.passkeys.listPasskeys(alice.id)).toEqual([]);
      expect(await store.passkeys.listPasskeys(bob.id)).toHaveLength(1);
      // A credential id freed by its removal may be registered again.
      expect(await store.passkeys.addPasskey({ ...two, userId: bob.id })).toBe('added');
    });
  });
}
