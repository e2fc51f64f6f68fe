import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisKeys, type RedisKeys } from '../../src/store/redis-keys.js';
import { defineStoreScripts, REMOVAL_STALE } from '../../src/store/redis-scripts.js';
import { createRedisStore, redisUrlForDisplay } from '../../src/store/redis-store.js';
import type { SessionEvent, Store, UserRecord } from '../../src/store/types.js';
import { startRedisServer, type TestRedisServer } from '../support/redis-server.js';
import { describeLeaseContract } from './store-contract-leases.js';
import { describeStoreContract, newUser, type MakeStore } from './store-contract.js';
import { rejectionOf } from './store-fixtures.js';

let server: TestRedisServer;

beforeAll(async () => {
  server = await startRedisServer();
});

afterAll(async () => {
  await server?.stop();
});

/** A prefix no other test case uses, so cases are isolated without flushing. */
function freshPrefix(): string {
  return `tg-test-${randomUUID()}:`;
}

/** Runs `use` with a plain client of its own, for looking behind the store's back. */
async function withClient<T>(use: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    return await use(redis);
  } finally {
    // Not QUIT: a paused server (CLIENT PAUSE) would hold that too.
    redis.disconnect();
  }
}

async function scanKeys(redis: Redis, match: string): Promise<Set<string>> {
  const keys = new Set<string>();
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', match, 'COUNT', 1000);
    batch.forEach((key) => keys.add(key));
    cursor = next;
  } while (cursor !== '0');
  return keys;
}

/** What Redis Cluster hashes: the first non-empty `{…}` of the key, else the key. */
function hashTag(key: string): string {
  const open = key.indexOf('{');
  const close = open === -1 ? -1 : key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** Calls every writing method once, so every kind of key exists afterwards. */
async function writeEverything(store: Store): Promise<{ userId: string; jti: string }> {
  const user = await store.users.createUser(newUser());
  await store.tenants.upsertTenant(
    {
      tenantId: 'acme',
      type: 'orgtenant',
      name: 'Acme',
      cloudRegion: 'eu-west-1',
      createdBy: user.email,
    },
    1_700_000_000,
  );
  expect(await store.memberships.addMember('acme', user.id)).toBe(true);
  expect(await store.users.setPasswordHash(user.id, '$2b$10$new')).toBe(1);
  expect(await store.users.replacePasswordHash(user.id, '$2b$10$new', '$2b$12$new')).toBe(true);
  const jti = randomUUID();
  await store.revocations.revokeToken(jti, Math.floor(Date.now() / 1000) + 60);
  return { userId: user.id, jti };
}

/** A fresh store for one case of the contract suites. */
const makeStore: MakeStore = async () => {
  const keyPrefix = freshPrefix();
  const store = await createRedisStore({ url: server.url, keyPrefix });
  return {
    store,
    async cleanup() {
      await store.close();
      // Only this case's keys: matters when REDIS_URL points at a shared server.
      await withClient(async (redis) => {
        const keys = [...(await scanKeys(redis, `${keyPrefix}*`))];
        if (keys.length > 0) await redis.del(...keys);
      });
    },
  };
};

describeStoreContract('redis', makeStore);
describeLeaseContract('redis', makeStore);

describe('Redis store specifics', () => {
  it('writes only keys under its prefix', async () => {
    const keyPrefix = freshPrefix();
    const before = await withClient((redis) => scanKeys(redis, '*'));
    const store = await createRedisStore({ url: server.url, keyPrefix });
    const { userId, jti } = await writeEverything(store);
    await store.close();

    const { all, prefixed } = await withClient(async (redis) => ({
      all: await scanKeys(redis, '*'),
      prefixed: await scanKeys(redis, `${keyPrefix}*`),
    }));
    const written = new Set([...all].filter((key) => !before.has(key)));
    expect(written).toEqual(prefixed);
    expect(prefixed).toContain(`${keyPrefix}{dir}:user:${userId}`);
    expect(prefixed).toContain(`${keyPrefix}revoked:{${jti}}`);
    expect(prefixed).toContain(`${keyPrefix}{dir}:membership:acme:${userId}`);
    expect(prefixed).toContain(`${keyPrefix}{dir}:generation`);
    expect(prefixed.size).toBe(13);
  });

  it('keeps the identity directory in one cluster slot and spreads the deny-list', async () => {
    const keyPrefix = freshPrefix();
    const store = await createRedisStore({ url: server.url, keyPrefix });
    const { jti } = await writeEverything(store);
    await store.close();
    const keys = await withClient((redis) => scanKeys(redis, `${keyPrefix}*`));

    const revoked = [...keys].filter((key) => key.startsWith(`${keyPrefix}revoked:`));
    const directory = [...keys].filter((key) => !revoked.includes(key));
    expect(revoked.map(hashTag)).toEqual([jti]);
    expect(directory.length).toBeGreaterThanOrEqual(12);
    for (const key of directory) {
      expect(key.startsWith(`${keyPrefix}{dir}:`), key).toBe(true);
      expect(hashTag(key), key).toBe('dir');
    }
  });

  it('a removal refuses to run on a stale read, writing and publishing nothing', async () => {
    const keyPrefix = freshPrefix();
    const keys = createRedisKeys(keyPrefix);
    const store = await createRedisStore({ url: server.url, keyPrefix });
    try {
      const user = await store.users.createUser(newUser());
      const late = await store.users.createUser(newUser());
      await store.tenants.upsertTenant(
        { tenantId: 'acme', type: 'orgtenant', name: 'A', cloudRegion: 'r', createdBy: 'a@b.c' },
        1_700_000_000,
      );
      await store.memberships.addMember('acme', user.id);
      await store.memberships.addMember('acme', late.id);
      // As if `late` had joined after the caller read the members (or the user's tenants).
      const replies = await withClient(async (plain) => {
        const redis = defineStoreScripts(plain);
        const published = await plain.duplicate();
        let heard = 0;
        await published.subscribe(keys.sessionChannel);
        published.on('message', () => heard++);
        const tenantKeys = [
          keys.tenant('acme'),
          keys.tenantMembers('acme'),
          keys.tenants,
          keys.generation,
          keys.tenantClients('acme'),
          keys.userTenants(user.id),
          keys.membership('acme', user.id),
        ];
        const tenant = await redis.removeOrgTenant(
          tenantKeys.length,
          ...tenantKeys,
          'acme',
          keys.sessionChannel,
          1,
          user.id,
          0,
        );
        const userKeys = [
          keys.user(user.id),
          keys.email(user.email),
          keys.users,
          keys.tenants,
          keys.userTenants(user.id),
          keys.tenant(user.personalTenantId),
          keys.tenantMembers(user.personalTenantId),
          keys.generation,
          keys.tenantMembers(user.personalTenantId),
          keys.membership(user.personalTenantId, user.id),
        ];
        const stale = await redis.removeUser(
          userKeys.length,
          ...userKeys,
          user.id,
          user.email,
          user.personalTenantId,
          keys.sessionChannel,
          user.personalTenantId,
        );
        await new Promise((resolve) => setTimeout(resolve, 50));
        published.disconnect();
        return { tenant, stale, heard };
      });
      expect(replies).toEqual({ tenant: REMOVAL_STALE, stale: REMOVAL_STALE, heard: 0 });
      expect(await store.memberships.listMembers('acme')).toEqual([user.id, late.id].sort());
      expect(await store.users.getUser(user.id)).toEqual(user);
      // Through the store, which reads again: both go.
      expect(await store.tenants.removeOrgTenant('acme')).toEqual([user.id, late.id].sort());
      expect(await store.users.removeUser(user.id)).toEqual([user.personalTenantId]);
    } finally {
      await store.close();
    }
  });

  it('a membership stored before roles reads as admin for the tenant’s creator, else member', async () => {
    const keyPrefix = freshPrefix();
    const keys = createRedisKeys(keyPrefix);
    const store = await createRedisStore({ url: server.url, keyPrefix });
    try {
      const { creator, other } = await membershipsBeforeRoles(store, keys, 'joined_at');
      await withClient(async (redis) => {
        await redis.hdel(keys.membership(creator.personalTenantId, creator.id), 'role');
      });
      expect(await store.memberships.getMemberRole('acme', creator.id)).toBe('admin');
      expect(await store.memberships.getMemberRole('acme', other.id)).toBe('member');
      // Nor did it keep when a membership began: the members list says so (null), never a guess.
      expect(await store.memberships.listMemberships('acme')).toEqual(
        expect.arrayContaining([
          { userId: creator.id, role: 'admin', joinedAt: null },
          { userId: other.id, role: 'member', joinedAt: null },
        ]),
      );
      expect(await store.memberships.getMemberRole(creator.personalTenantId, creator.id)).toBe(
        'admin',
      );
      // Setting the role it reads as changes nothing; another one takes a generation.
      const before = await store.memberships.membershipForToken('acme', other.id);
      expect(await store.memberships.setMemberRole('acme', other.id, 'member')).toBe(false);
      expect(await store.memberships.membershipForToken('acme', other.id)).toEqual(before);
      expect(await store.memberships.setMemberRole('acme', other.id, 'admin')).toBe(true);
      expect(await store.memberships.getMemberRole('acme', other.id)).toBe('admin');
    } finally {
      await store.close();
    }
  });

  it('keeps an admin counting a membership stored before roles as the reads do', async () => {
    const keyPrefix = freshPrefix();
    const keys = createRedisKeys(keyPrefix);
    const store = await createRedisStore({ url: server.url, keyPrefix });
    const keep = { keepAnAdmin: true } as const;
    try {
      // Before roles: the creator reads as admin, the other as member.
      const { creator, other } = await membershipsBeforeRoles(store, keys);
      const before = await store.memberships.readMembership('acme', creator.id);
      expect(await store.memberships.setMemberRole('acme', creator.id, 'member', keep)).toBe(
        'last-admin',
      );
      expect(await store.memberships.removeMember('acme', creator.id, keep)).toBe('last-admin');
      expect(await store.memberships.readMembership('acme', creator.id)).toEqual(before);
      // The other, a member as read, is no admin to keep; made one, the creator still counts.
      expect(await store.memberships.setMemberRole('acme', other.id, 'member', keep)).toBe(false);
      expect(await store.memberships.setMemberRole('acme', other.id, 'admin', keep)).toBe(true);
      expect(await store.memberships.setMemberRole('acme', other.id, 'member', keep)).toBe(true);
      expect(await store.memberships.setMemberRole('acme', other.id, 'admin', keep)).toBe(true);
      expect(await store.memberships.removeMember('acme', creator.id, keep)).toBe(true);
      expect(await store.memberships.removeMember('acme', other.id, keep)).toBe('last-admin');
    } finally {
      await store.close();
    }
  });

  it('keeps clients and keys in the directory’s slot, their secrets as digests only', async () => {
    const keyPrefix = freshPrefix();
    const store = await createRedisStore({ url: server.url, keyPrefix });
    try {
      await store.tenants.upsertTenant(
        { tenantId: 'acme', type: 'orgtenant', name: 'A', cloudRegion: 'r', createdBy: 'a@b.c' },
        1_700_000_000,
      );
      const secret = 'tgs_the-secret-itself';
      await store.clients.createClient({
        clientId: 'tgc_slot',
        tenantId: 'acme',
        name: 'n',
        scopes: ['a:b'],
        secretDigest: 'digest-of-secret',
        createdAt: 1_700_000_000,
      });
      await store.apiKeys.createApiKey({
        keyId: 'tgkid_slot',
        clientId: 'tgc_slot',
        digest: 'digest-of-key',
        createdAt: 1_700_000_000,
      });
      const keys = await withClient((redis) => scanKeys(redis, `${keyPrefix}*`));
      for (const key of keys) expect(hashTag(key), key).toBe('dir');
      expect(keys).toContain(`${keyPrefix}{dir}:client:tgc_slot`);
      expect(keys).toContain(`${keyPrefix}{dir}:api-key:tgkid_slot`);
      const values = await withClient(async (redis) =>
        JSON.stringify(await redis.hgetall(`${keyPrefix}{dir}:client:tgc_slot`)),
      );
      expect(values).not.toContain(secret);
    } finally {
      await store.close();
    }
  });

  it('a membership stored before generations: no token of it is alive; the next token request gives it one', async () => {
    const keyPrefix = freshPrefix();
    const keys = createRedisKeys(keyPrefix);
    const store = await createRedisStore({ url: server.url, keyPrefix });
    const watcher = await createRedisStore({ url: server.url, keyPrefix });
    const events: SessionEvent[] = [];
    let live = false;
    const stop = watcher.revocations.watchSessions({
      onEvent: (e) => events.push(e),
      onLive: (v) => (live = v),
    });
    try {
      const user = await store.users.createUser(newUser());
      await store.tenants.upsertTenant(
        { tenantId: 'acme', type: 'orgtenant', name: 'A', cloudRegion: 'r', createdBy: 'a@b.c' },
        1_700_000_000,
      );
      // What an earlier version's `member add` wrote: the two sets, no membership record.
      await withClient(async (redis) => {
        await redis.sadd(keys.userTenants(user.id), 'acme');
        await redis.sadd(keys.tenantMembers('acme'), user.id);
      });
      expect(await store.memberships.isMember('acme', user.id)).toBe(true);
      const before = await store.memberships.readMembership('acme', user.id);
      expect(before.membership).toBeNull();
      while (!live) await new Promise((resolve) => setTimeout(resolve, 10));

      const given = await store.memberships.membershipForToken('acme', user.id);
      expect(given?.generation).toBeGreaterThan(before.asOf);
      expect(await store.memberships.membershipForToken('acme', user.id)).toEqual(given);
      expect(await store.memberships.readMembership('acme', user.id)).toEqual({
        membership: given,
        asOf: given?.generation,
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(events).toEqual([
        {
          kind: 'membership-added',
          userId: user.id,
          tenantId: 'acme',
          generation: given?.generation,
        },
      ]);
    } finally {
      stop();
      await watcher.close();
      await store.close();
    }
  });

  it('builds every directory key with the {dir} tag and refuses a braced prefix', () => {
    const keys = createRedisKeys('tg:');
    const directory = [
      keys.user('u{1}'),
      keys.email('a{b}@example.com'),
      keys.tenant('t'),
      keys.userTenants('u'),
      keys.tenantMembers('t'),
      keys.membership('t', 'u{1}'),
      keys.generation,
      keys.users,
      keys.tenants,
    ];
    expect(directory.map(hashTag)).toEqual(Array(directory.length).fill('dir'));
    expect(hashTag(keys.revoked('abc'))).toBe('abc');
    expect(() => createRedisKeys('tg{x}:')).toThrow(RangeError);
  });

  it('fails closed when Redis dies, and recovers when it is back', async () => {
    const own = await startRedisServer();
    const store = await createRedisStore({ url: own.url, keyPrefix: freshPrefix() });
    try {
      await store.ping();
      await own.kill();

      const started = Date.now();
      const err = await rejectionOf(store.users.getUser('u-any'));
      expect(Date.now() - started).toBeLessThan(3000);
      expect(err.code).toBe('unavailable');
      expect(err.message).toBe('The store is unreachable.');
      expect(err.cause).toBeInstanceOf(Error);
      expect((await rejectionOf(store.users.createUser(newUser()))).code).toBe('unavailable');

      await own.restart();
      const deadline = Date.now() + 10_000;
      let recovered = false;
      while (!recovered && Date.now() < deadline) {
        recovered = await store.ping().then(
          () => true,
          () => false,
        );
        if (!recovered) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(recovered).toBe(true);
      const user = await store.users.createUser(newUser());
      expect(await store.users.getUser(user.id)).toEqual(user);
    } finally {
      await store.close();
      await own.stop();
    }
  });

  it('fails closed within the command timeout when Redis hangs', async () => {
    const store = await createRedisStore({
      url: server.url,
      keyPrefix: freshPrefix(),
      commandTimeoutMs: 300,
    });
    try {
      await store.ping();
      // CLIENT PAUSE holds every client's commands unanswered: a hung server.
      // (It holds CLIENT UNPAUSE too, so the pause is short and runs out.)
      const pauseMs = 800;
      await withClient((redis) => redis.call('CLIENT', 'PAUSE', String(pauseMs), 'ALL'));
      const started = Date.now();
      const err = await rejectionOf(store.users.getUser('u-any'));
      expect(Date.now() - started).toBeLessThan(pauseMs);
      expect(err.code).toBe('unavailable');
      expect(err.message).toBe('The store is unreachable.');
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
      await expect(store.ping()).resolves.toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it('refuses to start without Redis, naming the URL but not its password', async () => {
    const port = await freePort();
    const started = Date.now();
    const err = await rejectionOf(
      createRedisStore({
        url: `redis://:secret@127.0.0.1:${port}`,
        keyPrefix: 'tg:',
        connectTimeoutMs: 500,
      }),
    );
    expect(Date.now() - started).toBeLessThan(3000);
    expect(err.code).toBe('unavailable');
    expect(err.message).toContain(`redis://127.0.0.1:${port}`);
    expect(err.message).not.toContain('secret');
    expect(err.stack ?? '').not.toContain('secret');
  });

  it('shows a Redis URL without password or query', () => {
    expect(redisUrlForDisplay('redis://app:secret@db.internal:6380/2?password=x')).toBe(
      'redis://app@db.internal:6380/2',
    );
    expect(redisUrlForDisplay('redis://:secret@127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
    expect(redisUrlForDisplay('not a url :secret@')).not.toContain('secret');
  });
});

/**
 * acme, created by boss@example.com (spelled as an operator might), with the
 * creator a member and another user an admin; then their membership hashes
 * as a version before roles wrote them: without `role` (and the `extra`
 * fields named). Read now, the creator is acme's admin, the other a member.
 */
async function membershipsBeforeRoles(
  store: Store,
  keys: RedisKeys,
  ...extra: string[]
): Promise<{ creator: UserRecord; other: UserRecord }> {
  const creator = await store.users.createUser(newUser({ email: 'boss@example.com' }));
  const other = await store.users.createUser(newUser());
  await store.tenants.upsertTenant(
    {
      tenantId: 'acme',
      type: 'orgtenant',
      name: 'A',
      cloudRegion: 'r',
      createdBy: ' Boss@Example.com',
    },
    1_700_000_000,
  );
  await store.memberships.addMember('acme', creator.id, 'member');
  await store.memberships.addMember('acme', other.id, 'admin');
  await withClient(async (redis) => {
    await redis.hdel(keys.membership('acme', creator.id), 'role', ...extra);
    await redis.hdel(keys.membership('acme', other.id), 'role', ...extra);
  });
  return { creator, other };
}
