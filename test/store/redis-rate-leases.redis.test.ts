/**
 * The rate-limit lease script on a real redis-server, as instances call it:
 * a request admitted before an instance's first grant is charged to the
 * shared bucket, into debt if need be; nothing is granted while a debt is
 * unpaid, and the key lives until it is paid. The cluster-wide bound built
 * on it is proved with real gateways in `test/proxy/rate-limits.redis.test.ts`.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisStore } from '../../src/store/redis-store.js';
import type { RateLeaseRequest, Store } from '../../src/store/types.js';
import { startRedisServer, type TestRedisServer } from '../support/redis-server.js';

let server: TestRedisServer;
let store: Store;
let prefix: string;

beforeAll(async () => {
  server = await startRedisServer();
  prefix = `tg-test-${randomUUID()}:`;
  store = await createRedisStore({ url: server.url, keyPrefix: prefix, commandTimeoutMs: 1000 });
});

afterAll(async () => {
  await store?.close();
  await server?.stop();
});

const STALE_MS = 2000;
const holder = (id: string) => ({ id, silentAfterMs: STALE_MS });

/** One bucket's call for `instance`; a rate so slow that no refill shows unless asked for. */
async function lease(
  instance: string,
  bucket: string,
  ask: Partial<RateLeaseRequest> & { ratePerSecond?: number },
) {
  const request: RateLeaseRequest = {
    bucket,
    ratePerSecond: 0.0001,
    burst: 2,
    held: 0,
    charge: 0,
    leaving: false,
    ...ask,
  };
  const [answer] = await store.leaseRates!(holder(instance), [request]);
  if (answer === undefined) throw new Error('the lease call failed');
  return answer;
}

describe('rate-limit leases', () => {
  it('charges what an instance admitted before its first grant, out of what it is granted', async () => {
    const bucket = `charge-${randomUUID()}`;
    const first = await lease('a', bucket, { burst: 10, charge: 1 });
    expect(first.instances).toBe(1);
    expect(first.grant).toBeCloseTo(9, 3);
    expect(first.shared).toBeCloseTo(0, 3);
  });

  it('goes into debt for a charge it cannot cover, and grants nothing until the debt is paid', async () => {
    const bucket = `debt-${randomUUID()}`;
    expect((await lease('a', bucket, {})).grant).toBeCloseTo(2, 3);
    // B admitted one request before its first grant, while A holds the whole burst.
    const charged = await lease('b', bucket, { charge: 1 });
    expect(charged).toMatchObject({ grant: 0, instances: 2 });
    expect(charged.shared).toBeCloseTo(-1, 3);
    expect((await lease('b', bucket, {})).grant).toBe(0);
    // A gives back its 2: one pays the debt, one is left to grant.
    const left = await lease('a', bucket, { held: 2, leaving: true });
    expect(left.shared).toBeCloseTo(1, 3);
    const after = await lease('b', bucket, {});
    expect(after.instances).toBe(1);
    expect(after.grant).toBeCloseTo(1, 3);
  });

  it('a leaving instance is charged too', async () => {
    const bucket = `leaving-${randomUUID()}`;
    const left = await lease('a', bucket, { charge: 1, leaving: true });
    expect(left.grant).toBe(0);
    expect(left.shared).toBeCloseTo(1, 3);
  });

  it('keeps a bucket in debt until the refill has paid it and filled the bucket', async () => {
    const bucket = `expiry-${randomUUID()}`;
    await lease('a', bucket, { ratePerSecond: 1 });
    await lease('b', bucket, { ratePerSecond: 1, charge: 1 });
    const redis = new Redis(server.url);
    try {
      // -1 to 2 at 1/s: 3 s, and the silence after which holdings are written off.
      const ttl = await redis.pttl(`${prefix}rate:${bucket}`);
      expect(ttl).toBeGreaterThan(3000 + STALE_MS - 500);
      expect(ttl).toBeLessThanOrEqual(3000 + STALE_MS);
    } finally {
      redis.disconnect();
    }
  });
});
