/**
 * A bug or a corrupt record is a 500 `internal_error` in the one JSON shape,
 * with a description that says nothing about the cause (the log has it), and
 * the gateway goes on serving. A tenant record edited by hand into a type the
 * gateway does not know stands in for the bug: the store refuses to guess.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { basic } from '../support/gateway.js';
import { expectError } from '../support/expect-error.js';
import {
  ALICE,
  startIdentityFixture,
  type RedisIdentityFixture,
} from '../support/identity-fixture.js';

let fx: RedisIdentityFixture;
let redis: Redis;

beforeAll(async () => {
  fx = await startIdentityFixture();
  redis = new Redis(fx.redis.url, { lazyConnect: true });
  await redis.connect();
});
afterAll(async () => {
  redis.disconnect();
  await fx.close();
});

const token = () =>
  fetch(`${fx.gw.url}/1/token?tenant_id=acme`, {
    headers: { authorization: basic(ALICE.email, ALICE.password) },
  });

it('a malformed record: 500 internal_error that names no content, then service as before', async () => {
  expect((await token()).status).toBe(200);
  const prefix = (fx.config.store as { redis: { keyPrefix: string } }).redis.keyPrefix;
  const key = `${prefix}{dir}:tenant:acme`;
  expect(await redis.hget(key, 'type')).toBe('orgtenant');

  await redis.hset(key, 'type', 'secret-looking-value');
  const body = await expectError(await token(), 500, 'internal_error');
  expect(JSON.stringify(body)).not.toContain('secret-looking-value');

  await redis.hset(key, 'type', 'orgtenant');
  expect((await token()).status).toBe(200);
});
