/**
 * The store contract for the sso slice (`Store.sso`): the browser sign-in's
 * one-time records. Registered by `describeStoreContract`.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/types.js';

/** The browser sign-in's one-time records: single use, expiring, kinds apart. */
export function describeSsoContract(current: () => Store): void {
  describe('browser sign-in one-time records', () => {
    it('gives a record to its first take only', async () => {
      const store = current();
      await store.sso.putSsoRecord('sign-in', 'state-1', '{"a":1}', 60);
      const takes = await Promise.all([
        store.sso.takeSsoRecord('sign-in', 'state-1'),
        store.sso.takeSsoRecord('sign-in', 'state-1'),
      ]);
      expect(takes.filter((t) => t !== null)).toEqual(['{"a":1}']);
      expect(await store.sso.takeSsoRecord('sign-in', 'state-1')).toBeNull();
    });

    it('keeps the kinds apart and knows no made-up key', async () => {
      const store = current();
      await store.sso.putSsoRecord('code', 'k', 'the code', 60);
      expect(await store.sso.takeSsoRecord('sign-in', 'k')).toBeNull();
      expect(await store.sso.takeSsoRecord('code', 'other')).toBeNull();
      expect(await store.sso.takeSsoRecord('code', 'k')).toBe('the code');
    });

    it('forgets a record once its time is up', async () => {
      const store = current();
      await store.sso.putSsoRecord('code', 'short', 'x', 1);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect(await store.sso.takeSsoRecord('code', 'short')).toBeNull();
    });

    it('reads a record without taking it', async () => {
      const store = current();
      await store.sso.putSsoRecord('idp-subject', 'sub-1', 'usr_1', 60);
      expect(await store.sso.readSsoRecord('idp-subject', 'sub-1')).toBe('usr_1');
      expect(await store.sso.readSsoRecord('idp-subject', 'sub-1')).toBe('usr_1');
      expect(await store.sso.readSsoRecord('idp-sid', 'sub-1')).toBeNull();
    });

    it('adds a record once: of concurrent adds one wins, and again only once it expired', async () => {
      const store = current();
      const adds = await Promise.all([
        store.sso.addSsoRecord('logout-jti', 'jti-1', '1', 1),
        store.sso.addSsoRecord('logout-jti', 'jti-1', '1', 1),
      ]);
      expect(adds.filter(Boolean)).toHaveLength(1);
      expect(await store.sso.addSsoRecord('logout-jti', 'jti-1', '1', 1)).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect(await store.sso.readSsoRecord('logout-jti', 'jti-1')).toBeNull();
      expect(await store.sso.addSsoRecord('logout-jti', 'jti-1', '1', 60)).toBe(true);
    });
  });
}
