/**
 * A start whose seed write was not confirmed by a replica in time
 * (`unavailable`: the write is on the master) applies the seed again until
 * the store's connect timeout, instead of failing the start (CI saw a
 * Cluster start fail so on a loaded machine). The seed is idempotent: the
 * user is written once.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/index.js';
import { createCore, type Core } from '../../src/core/create-core.js';
import { GatewayError } from '../../src/errors.js';
import { seedStore } from '../../src/gateway/build-core.js';

describe('the seed at start', () => {
  const cores: Core[] = [];
  afterAll(async () => {
    for (const core of cores) await core.close();
  });

  async function coreWithUnconfirmedWrites(unconfirmed: number, redisConnectTimeoutMs?: number) {
    const dir = await mkdtemp(join(tmpdir(), 'seed-retry-'));
    const seed = join(dir, 'seed.yaml');
    await writeFile(
      seed,
      'users:\n  - { email: alice@example.com, password: "alice-password-1" }\n',
    );
    const config = validateConfig({ seed, passwords: { bcryptCost: 4 } }, dir, 'test');
    const core = await createCore(config, pino({ level: 'silent' }));
    // Read by the seed alone: the store stays the memory one.
    if (redisConnectTimeoutMs !== undefined)
      Object.assign(config.store, { redis: { connectTimeoutMs: redisConnectTimeoutMs } });
    cores.push(core);
    const users = core.store.users;
    const createUser = users.createUser.bind(users);
    let writes = 0;
    users.createUser = async (...args) => {
      writes++;
      const created = await createUser(...args);
      if (unconfirmed-- > 0)
        throw new GatewayError('unavailable', 'The store could not confirm the change; retry.');
      return created;
    };
    return { config, core, writes: () => writes };
  }

  it('is applied again when a write was not confirmed, within the connect timeout', async () => {
    const { config, core, writes } = await coreWithUnconfirmedWrites(2, 5000);
    await seedStore(config, core, pino({ level: 'silent' }));
    expect(writes()).toBe(1);
    expect(await core.store.users.findUserByEmail('alice@example.com')).not.toBeNull();
  });

  it('fails the start once the connect timeout has passed', async () => {
    const { config, core } = await coreWithUnconfirmedWrites(0, 300);
    let reads = 0;
    core.store.users.findUserByEmail = async () => {
      reads++;
      throw new GatewayError('unavailable', 'The store is unreachable.');
    };
    await expect(seedStore(config, core, pino({ level: 'silent' }))).rejects.toMatchObject({
      code: 'unavailable',
    });
    expect(reads).toBeGreaterThan(1);
  });
});
