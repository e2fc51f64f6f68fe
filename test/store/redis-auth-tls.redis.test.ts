/**
 * Issue 14: `store.redis.username`/`password` (a Redis ACL user) and
 * `store.redis.tls` (`rediss://` with the config's CA and server name),
 * against a real redis-server with TLS on and a CA made here with openssl.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isGatewayError } from '../../src/errors.js';
import { createRedisStore } from '../../src/store/redis-store.js';
import { findFreeServerPort } from '../support/ports.js';
import { startRedisProcess, unpersisted, type RedisProcess } from '../support/redis-server.js';
import { makeCa, makeSignedCertificate } from '../support/test-certificates.js';
import { newUser } from './store-contract.js';

let dir: string;
let redis: RedisProcess;
let port: number;
const USER = 'gateway';
const PASSWORD = `acl-${randomUUID()}`;

/** A CA and a server certificate for `redis.test` signed by it, and a second, unrelated CA. */
function makeCertificates(into: string): void {
  makeCa(into, 'ca');
  makeCa(into, 'other-ca');
  makeSignedCertificate(into, 'server', '/CN=redis.test', 'subjectAltName=DNS:redis.test');
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tg-redis-tls-'));
  makeCertificates(dir);
  port = await findFreeServerPort();
  redis = await startRedisProcess(
    port,
    [
      '--port',
      '0',
      '--tls-port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--tls-cert-file',
      join(dir, 'server.pem'),
      '--tls-key-file',
      join(dir, 'server.key'),
      '--tls-ca-cert-file',
      join(dir, 'ca.pem'),
      '--tls-auth-clients',
      'no',
      ...unpersisted(dir),
      '--user',
      'default',
      'off',
      '--user',
      USER,
      'on',
      `>${PASSWORD}`,
      '~*',
      '&*',
      '+@all',
    ],
    'Ready to accept connections',
    false,
  );
}, 30_000);

afterAll(async () => {
  await redis?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

const options = (overrides: Record<string, unknown> = {}) => ({
  url: `rediss://127.0.0.1:${port}`,
  username: USER,
  password: PASSWORD,
  tls: { ca: join(dir, 'ca.pem'), servername: 'redis.test' },
  keyPrefix: `tg-test-${randomUUID().slice(0, 8)}:`,
  connectTimeoutMs: 1000,
  ...overrides,
});

describe('Redis over TLS with an ACL user', () => {
  it('works with the CA, the server name and the user', async () => {
    const store = await createRedisStore(options());
    try {
      const user = newUser();
      await store.users.createUser(user);
      expect((await store.users.getUser(user.id))?.email).toBe(user.email);
    } finally {
      await store.close();
    }
  });

  it.each([
    ['a CA that did not sign the server', { tls: { ca: join('OTHER'), servername: 'redis.test' } }],
    ['another server name', { tls: { ca: 'CA', servername: 'not-redis.test' } }],
    ['a wrong password', { password: 'wrong-password' }],
    ['no user (the default user is off)', { username: undefined, password: undefined }],
  ])('refuses %s: unavailable at start, no secret in the message', async (_name, overrides) => {
    const tls = (overrides as { tls?: { ca: string; servername: string } }).tls;
    const resolved =
      tls === undefined
        ? overrides
        : {
            tls: {
              ca: join(dir, tls.ca === 'OTHER' ? 'other-ca.pem' : 'ca.pem'),
              servername: tls.servername,
            },
          };
    const err = await createRedisStore(options(resolved)).catch((e: unknown) => e);
    expect(isGatewayError(err) && err.code).toBe('unavailable');
    expect((err as Error).message).not.toContain(PASSWORD);
  });
});
