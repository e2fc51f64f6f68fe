/**
 * The codemod that turns flat store calls into slice calls
 * (`scripts/codemods/store-slices.mjs`): its table is the store's, it
 * rewrites what a branch written against the flat store may hold, it leaves
 * everything else alone, a second run changes nothing, and no flat call is
 * left in this repository.
 */
import { describe, expect, it } from 'vitest';
import {
  rewrite,
  rewriteFiles,
  skipped,
  SLICE_OPERATIONS,
} from '../../scripts/codemods/store-slices.mjs';
import { createMemoryStore } from '../../src/store/memory-store.js';
import type { StoreSliceName } from '../../src/store/types.js';

const FLAT = `
import { REFRESH_USED_DIGESTS_KEPT } from '../../src/store/refresh-types.js';
function idps(store: TenantIdps): void {}
const user = await deps.store.getUser(id);
await this.store?.revokeToken(jti, exp);
const leases = store.revocationLeases;
await core.store
  .removeMember('acme', userId);
const families = await inner.revokeRefreshFamiliesOf(userId, tenantId);
vi.spyOn(store, 'setPasswordHash');
`;

const SLICED = `
import { REFRESH_USED_DIGESTS_KEPT } from '../../src/store/refresh.js';
function idps(store: IdpStore): void {}
const user = await deps.store.users.getUser(id);
await this.store?.revocations.revokeToken(jti, exp);
const leases = store.revocations.leases;
await core.store
  .memberships.removeMember('acme', userId);
const families = await inner.refresh.revokeRefreshFamiliesOf(userId, tenantId);
vi.spyOn(store.users, 'setPasswordHash');
`;

describe('the store-slices codemod', () => {
  it('knows every operation of every slice, and nothing else', () => {
    const store = createMemoryStore();
    const slices = Object.keys(SLICE_OPERATIONS) as StoreSliceName[];
    for (const slice of slices) {
      const functions = Object.entries(store[slice])
        .filter(([, value]) => typeof value === 'function')
        .map(([name]) => name);
      expect(SLICE_OPERATIONS[slice].toSorted(), slice).toEqual(functions.toSorted());
    }
    expect(slices.toSorted()).toEqual(
      Object.entries(store)
        .filter(([, value]) => typeof value === 'object')
        .map(([name]) => name)
        .toSorted(),
    );
  });

  it('knows slices of at most 15 operations each (issue 43)', () => {
    for (const [slice, operations] of Object.entries(SLICE_OPERATIONS)) {
      expect(operations.length, slice).toBeLessThanOrEqual(15);
    }
  });

  it('rewrites flat calls of a store into slice calls and renamed modules and types, and a second run changes nothing', () => {
    expect(rewrite(FLAT)).toBe(SLICED);
    expect(rewrite(SLICED)).toBe(SLICED);
  });

  it('leaves slices, other objects and the store’s own operations alone', () => {
    const untouched = [
      'await store.users.getUser(id);',
      'await users.getUser(id);',
      'await userStore.getUser(id);',
      'await redis.removeUser(keys.user(id));',
      'await identity.addMember(deps, input);',
      'const { createUser } = ops;',
      'await store.ping();',
      'await store.getUserTenants(id);',
      'expect(spans).toEqual([\'store.getUser\', "store.ping"]);',
    ].join('\n');
    expect(rewrite(untouched)).toBe(untouched);
    expect(rewrite('await identity.addMember(x);', { anyReceiver: true })).toBe(
      'await identity.memberships.addMember(x);',
    );
  });

  it('skips the slice implementations, whose Redis scripts share the operations’ names', () => {
    expect(skipped('src/store/redis-users.ts')).toBe(true);
    expect(skipped('src/store/memory-users.ts')).toBe(true);
    expect(skipped('src/auth/sessions.ts')).toBe(false);
    expect(skipped('test/store/redis-store.redis.test.ts')).toBe(false);
    expect(skipped('test/store/store-slices-codemod.test.ts')).toBe(true);
  });

  it('finds no flat store call left in src, test, bench, soak or scripts', () => {
    expect(rewriteFiles(['src', 'test', 'bench', 'soak', 'scripts'], { check: true })).toEqual([]);
  });
});
