/**
 * Issue 14: the store on Redis Sentinel (a master, a replica, three real
 * sentinels): the whole store contract, and what a configuration that names
 * the sentinels wrongly gets.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isGatewayError } from '../../src/errors.js';
import { createRedisStore } from '../../src/store/redis-store.js';
import { findFreePort } from '../support/ports.js';
import { startSentinelSet } from '../support/redis-topologies.js';
import { suiteResource } from '../support/suite-resource.js';
import { describeLeaseContract } from './store-contract-leases.js';
import { describeStoreContract, type MakeStore } from './store-contract.js';

const sentinel = suiteResource(startSentinelSet, (s) => s.stop());

/** A fresh store for one case of the contract suites. */
const makeStore: MakeStore = async () => {
  const store = await createRedisStore({
    sentinel: { name: sentinel().name, nodes: sentinel().sentinels },
    keyPrefix: `tg-test-${randomUUID()}:`,
  });
  // Each case has a prefix of its own: nothing to delete on a throw-away server.
  return { store, cleanup: () => store.close() };
};

describeStoreContract('redis via sentinel', makeStore);
describeLeaseContract('redis via sentinel', makeStore);

describe('Sentinel writes', () => {
  it('are acknowledged only once a replica has them: none answering, a logout is unavailable (503)', async () => {
    const store = await createRedisStore({
      sentinel: { name: sentinel().name, nodes: sentinel().sentinels },
      keyPrefix: `tg-test-${randomUUID()}:`,
      commandTimeoutMs: 400,
    });
    try {
      const expiresAt = Math.floor(Date.now() / 1000) + 60;
      await store.revocations.revokeToken(randomUUID(), expiresAt);
      for (const replica of sentinel().replicas) replica.pause();
      const jti = randomUUID();
      const err = await store.revocations.revokeToken(jti, expiresAt).catch((e: unknown) => e);
      expect(isGatewayError(err) && err.code).toBe('unavailable');
      // On the master all the same: a retry once a replica answers goes through.
      expect(await store.revocations.isTokenRevoked(jti)).toBe(true);
      for (const replica of sentinel().replicas) replica.resume();
      await store.revocations.revokeToken(jti, expiresAt);
    } finally {
      for (const replica of sentinel().replicas) replica.resume();
      await store.close();
    }
  });
});

describe('Sentinel configuration', () => {
  it('an unknown master name: unavailable at start, naming the sentinels and no password', async () => {
    const err = await createRedisStore({
      sentinel: { name: 'no-such-master', nodes: sentinel().sentinels, sentinelPassword: 's3cret' },
      password: 'n0de-secret',
      keyPrefix: 'tg:',
      connectTimeoutMs: 500,
    }).catch((e: unknown) => e);
    expect(isGatewayError(err) && err.code).toBe('unavailable');
    const message = (err as Error).message;
    expect(message).toContain('sentinel master "no-such-master" via');
    expect(message).toContain(sentinel().sentinels[0]);
    expect(message).not.toMatch(/s3cret|n0de-secret/);
  });

  it('sentinels nobody listens on: unavailable within the connect timeout', async () => {
    const port = await findFreePort();
    const err = await createRedisStore({
      sentinel: { name: sentinel().name, nodes: [`127.0.0.1:${port}`] },
      keyPrefix: 'tg:',
      connectTimeoutMs: 300,
    }).catch((e: unknown) => e);
    expect(isGatewayError(err) && err.code).toBe('unavailable');
  });
});
