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
  });
}
