/**
 * Issue 33: how the Redis store lays out refresh families — a key per family
 * under its own tag, a per-user index under the user's, both expiring by
 * themselves — and that the index is advisory (a family gone behind its back
 * is skipped and dropped); issue 42: each index entry names its family's
 * tenant, and a record written before successor keys is handed out without
 * one. The behaviour itself is the store contract's
 * (`store-contract-refresh.ts`).
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisKeys } from '../../src/store/redis-keys.js';
import { defineStoreScripts } from '../../src/store/redis-scripts.js';
import { createRedisStore } from '../../src/store/redis-store.js';
import {
  REFRESH_RECORD_MARGIN_SECONDS,
  type RefreshFamily,
  type Store,
} from '../../src/store/types.js';
import { startRedisServer, type TestRedisServer } from '../support/redis-server.js';
import { digest, plainFamily, realNow } from './store-fixtures.js';

let server: TestRedisServer;
let plain: Redis;

beforeAll(async () => {
  server = await startRedisServer();
  plain = new Redis(server.url, { maxRetriesPerRequest: 1 });
});

afterAll(async () => {
  plain?.disconnect();
  await server?.stop();
});

const newFamily = (overrides: Partial<RefreshFamily> = {}): RefreshFamily =>
  plainFamily(1000, 500, overrides);

/** Runs `use` on a store with a prefix of its own. */
async function withStore(
  use: (store: Store, keys: ReturnType<typeof createRedisKeys>) => Promise<void>,
): Promise<void> {
  const keyPrefix = `tg-test-${randomUUID()}:`;
  const store = await createRedisStore({ url: server.url, keyPrefix });
  try {
    await use(store, createRedisKeys(keyPrefix));
  } finally {
    await store.close();
  }
}

async function keysUnder(prefix: string): Promise<string[]> {
  return (await plain.keys(`${prefix}*`)).sort();
}

describe('refresh families in Redis', () => {
  it('keep a family under its own tag and the user’s index under the user’s, nothing else', async () => {
    await withStore(async (store, keys) => {
      const family = newFamily();
      await store.refresh.createRefreshFamily(family, 3);
      expect(await keysUnder(keys.prefix)).toEqual(
        [
          `${keys.prefix}refresh:{${family.familyId}}`,
          `${keys.prefix}refresh-user:{${family.userId}}`,
        ].sort(),
      );
      expect(
        await plain.zrange(keys.refreshFamiliesOf(family.userId), '0', '-1', 'WITHSCORES'),
      ).toEqual([`${family.familyId}@acme`, String(family.absoluteExpiresAt)]);
    });
  });

  it('expire by themselves: the family past its end and its last access token, the index past its last family', async () => {
    await withStore(async (store, keys) => {
      const now = realNow();
      const family = newFamily({ absoluteExpiresAt: now + 1000 });
      await store.refresh.createRefreshFamily(family, 3);
      const key = keys.refreshFamily(family.familyId);
      const index = keys.refreshFamiliesOf(family.userId);
      expect(await plain.expiretime(key)).toBe(now + 1000 + REFRESH_RECORD_MARGIN_SECONDS);
      expect(await plain.expiretime(index)).toBe(now + 1000 + REFRESH_RECORD_MARGIN_SECONDS);

      // An access token outliving the family keeps its record until it expires.
      await store.refresh.rotateRefreshToken({
        familyId: family.familyId,
        presentedDigest: family.currentDigest,
        successorDigest: digest(randomUUID()),
        jti: randomUUID(),
        accessExpiresAt: now + 1500,
        now: now + 10,
        graceSeconds: 10,
        idleTtlSeconds: 3600,
      });
      expect(await plain.expiretime(key)).toBe(now + 1500 + REFRESH_RECORD_MARGIN_SECONDS);
      // A revocation keeps the expiry.
      await store.refresh.revokeRefreshFamily(family.familyId);
      expect(await plain.expiretime(key)).toBe(now + 1500 + REFRESH_RECORD_MARGIN_SECONDS);
      expect(await plain.exists(index)).toBe(0);
    });
  });

  it('keep the index advisory: a family gone behind its back is skipped and dropped from it', async () => {
    await withStore(async (store, keys) => {
      const userId = `u-${randomUUID().slice(0, 8)}`;
      const [gone, kept] = [newFamily({ userId }), newFamily({ userId })];
      await store.refresh.createRefreshFamily(gone, 3);
      await store.refresh.createRefreshFamily(kept, 3);
      await plain.del(keys.refreshFamily(gone.familyId));
      expect(await store.refresh.revokeRefreshFamiliesOf(userId)).toEqual([
        { ...kept, revoked: true },
      ]);
      expect(await plain.exists(keys.refreshFamiliesOf(userId))).toBe(0);
      expect(await store.refresh.getRefreshFamily(gone.familyId)).toBeNull();
    });
  });

  it('count a family gone behind the index’s back until a login pushes it out, ending nothing else', async () => {
    await withStore(async (store, keys) => {
      const userId = `u-${randomUUID().slice(0, 8)}`;
      const now = realNow();
      const [gone, kept] = [
        newFamily({ userId, absoluteExpiresAt: now + 900 }),
        newFamily({ userId, absoluteExpiresAt: now + 1000 }),
      ];
      await store.refresh.createRefreshFamily(gone, 2);
      await store.refresh.createRefreshFamily(kept, 2);
      await plain.del(keys.refreshFamily(gone.familyId));
      expect(await store.refresh.createRefreshFamily(newFamily({ userId }), 2)).toEqual([]);
      expect((await store.refresh.getRefreshFamily(kept.familyId))?.revoked).toBe(false);
    });
  });

  it('leave a family past the cap in the index until it is ended: one a login failed to end goes at the next', async () => {
    await withStore(async (store, keys) => {
      const userId = `u-${randomUUID().slice(0, 8)}`;
      const index = keys.refreshFamiliesOf(userId);
      const [a, b] = [newFamily({ userId }), newFamily({ userId })];
      await store.refresh.createRefreshFamily(a, 5);
      await store.refresh.createRefreshFamily(b, 5);
      // A login that indexed its family and died before ending the ones past the cap.
      const now = realNow();
      const lost = await defineStoreScripts(plain).indexRefreshFamily(
        index,
        'rf-lost@acme',
        now + 2000,
        now,
        1,
        REFRESH_RECORD_MARGIN_SECONDS,
        '@acme',
      );
      expect((lost as string[]).sort()).toEqual(
        [`${a.familyId}@acme`, `${b.familyId}@acme`].sort(),
      );
      expect(await plain.zcard(index)).toBe(3);

      const next = newFamily({ userId, absoluteExpiresAt: now + 3000 });
      const evicted = await store.refresh.createRefreshFamily(next, 1);
      expect(evicted.map((f) => f.familyId).sort()).toEqual([a.familyId, b.familyId].sort());
      expect(evicted.every((f) => f.revoked)).toBe(true);
      expect(await plain.zrange(index, '0', '-1')).toEqual([`${next.familyId}@acme`]);
    });
  });

  it('hand out a family stored before successor keys without one, and end it with its old index entry', async () => {
    await withStore(async (store, keys) => {
      const family = newFamily();
      // As the gateway before issue 42 wrote it: no successorKey, a `used` list, the id alone indexed.
      const key = keys.refreshFamily(family.familyId);
      const index = keys.refreshFamiliesOf(family.userId);
      await plain.set(key, JSON.stringify({ ...family, used: {} }), 'EXAT', realNow() + 2000);
      await plain.zadd(index, family.absoluteExpiresAt, family.familyId);
      expect(await store.refresh.getRefreshFamilyToRotate(family.familyId)).toEqual({
        family,
        successorKey: null,
      });
      expect(await store.refresh.getRefreshFamily(family.familyId)).toEqual(family);
      // It counts for no tenant's cap, and a user-wide revocation still finds it.
      expect(
        await store.refresh.createRefreshFamily(newFamily({ userId: family.userId }), 1),
      ).toEqual([]);
      const revoked = await store.refresh.revokeRefreshFamiliesOf(family.userId, 'acme');
      expect(revoked.map((f) => f.familyId)).toContain(family.familyId);
      expect(await plain.exists(index)).toBe(0);
    });
  });

  it('keep a successor key per family in its record, never in what the store answers', async () => {
    await withStore(async (store, keys) => {
      const [a, b] = [newFamily(), newFamily()];
      await store.refresh.createRefreshFamily(a, 3);
      await store.refresh.createRefreshFamily(b, 3);
      const stored = JSON.parse((await plain.get(keys.refreshFamily(a.familyId)))!) as {
        successorKey: string;
      };
      expect(stored.successorKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect((await store.refresh.getRefreshFamilyToRotate(a.familyId))?.successorKey).toBe(
        stored.successorKey,
      );
      expect((await store.refresh.getRefreshFamilyToRotate(b.familyId))?.successorKey).not.toBe(
        stored.successorKey,
      );
      expect(JSON.stringify(await store.refresh.getRefreshFamily(a.familyId))).not.toContain(
        stored.successorKey,
      );
    });
  });

  it('keep the used digests in the record (none at first), never in what the store answers; a record without a list has used nothing', async () => {
    await withStore(async (store, keys) => {
      const family = newFamily();
      const key = keys.refreshFamily(family.familyId);
      await store.refresh.createRefreshFamily(family, 3);
      // As a record without the list was written (issue 42's first change): no `used`.
      const { used: _used, ...record } = JSON.parse((await plain.get(key))!) as {
        used: unknown;
      };
      await plain.set(key, JSON.stringify(record), 'KEEPTTL');
      const now = realNow();
      const step = (presentedDigest: string, at: number, successorDigest = digest(randomUUID())) =>
        store.refresh.rotateRefreshToken({
          familyId: family.familyId,
          presentedDigest,
          successorDigest,
          jti: randomUUID(),
          accessExpiresAt: at + 600,
          now: at,
          graceSeconds: 10,
          idleTtlSeconds: 500,
        });
      const second = digest(randomUUID());
      expect((await step(family.currentDigest, now, second)).outcome).toBe('rotated');
      expect((await step(second, now + 1)).outcome).toBe('rotated');
      const stored = JSON.parse((await plain.get(key))!) as { used: string[] };
      expect(stored.used).toEqual([family.currentDigest]);
      expect(await step(digest(randomUUID()), now + 2)).toEqual({ outcome: 'invalid' });
      const replay = await step(family.currentDigest, now + 3);
      expect(replay.outcome).toBe('reused');
      expect(replay).not.toHaveProperty('family.used');
      expect(await store.refresh.getRefreshFamily(family.familyId)).not.toHaveProperty('used');
    });
  });
});
