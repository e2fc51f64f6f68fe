/**
 * The one behaviour every store backend must have, run against each of them
 * (`*.test.ts` next to this file). A backend passes only if it is
 * indistinguishable from the others through the `Store` interface.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/types.js';
import { describeAuditContract } from './store-contract-audit.js';
import { describeBrowserSessionContract } from './store-contract-browser-sessions.js';
import { describeClientContract } from './store-contract-clients.js';
import { describeRefreshContract } from './store-contract-refresh.js';
import { describeDomainContract } from './store-contract-domains.js';
import { describeIdpContract } from './store-contract-idps.js';
import { describeInvitationContract } from './store-contract-invitations.js';
import { describeSsoContract } from './store-contract-sso.js';
import { describeUserContract } from './store-contract-users.js';
import { describeTenantContract } from './store-contract-tenants.js';
import { describeMembershipContract } from './store-contract-memberships.js';
import { describeRevocationContract } from './store-contract-revocations.js';
import { describeApiKeyContract } from './store-contract-api-keys.js';
import { describeRemovalContract } from './store-contract-removal.js';
import { rejectionOf } from './store-fixtures.js';

export { newUser } from './store-fixtures.js';

/** A fresh, empty store and how to dispose of it. */
export type MakeStore = () => Promise<{ store: Store; cleanup(): Promise<void> }>;

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

    describeUserContract(() => store);
    describeTenantContract(() => store);
    describeMembershipContract(() => store);
    describeRevocationContract(() => store);
    describeRemovalContract(() => store);
    describeAuditContract(() => store);
    describeClientContract(() => store);
    describeApiKeyContract(() => store);
    describeRefreshContract(() => store);
    describeIdpContract(() => store);
    describeDomainContract(() => store);
    describeInvitationContract(() => store);
    describeSsoContract(() => store);
    describeBrowserSessionContract(() => store);

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
