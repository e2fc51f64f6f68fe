/**
 * A private redis-server, a key directory and a gateway seeded with two users
 * and two org tenants: the world most api tests start from.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRedisServer, type TestRedisServer } from './redis-server.js';
import { basic, makeKeysDir, startTestGateway, uniquePrefix, type TestGateway } from './gateway.js';

export const ALICE = { email: 'alice@example.com', password: 'alice-password-1' };
export const BOB = { email: 'bob@example.com', password: 'bob-password-1' };

const SEED = `
users:
  - { email: ${ALICE.email}, password: "${ALICE.password}", name: Alice }
  - { email: ${BOB.email}, password: "${BOB.password}" }
tenants:
  - { tenant_id: acme, type: orgtenant, name: Acme, cloud_region: eu-west-1, created_by: ${ALICE.email}, members: [${ALICE.email}, ${BOB.email}] }
  - { tenant_id: globex, type: orgtenant, name: Globex, cloud_region: us-east-1, created_by: ${BOB.email}, members: [${BOB.email}] }
`;

export interface IdentityFixture {
  redis: TestRedisServer;
  keys: { dir: string; kid: string; pem: string };
  /** The config every gateway of this fixture runs on. */
  config: Record<string, unknown>;
  gw: TestGateway;
  /** A second gateway on the same Redis and keys. */
  startAnother(): Promise<TestGateway>;
  close(): Promise<void>;
}

export async function startIdentityFixture(
  overrides: Record<string, unknown> = {},
): Promise<IdentityFixture> {
  const redis = await startRedisServer();
  const keys = await makeKeysDir();
  const seedDir = mkdtempSync(join(tmpdir(), 'tg-seed-'));
  const seedFile = join(seedDir, 'seed.yaml');
  writeFileSync(seedFile, SEED);
  const config = {
    store: { redis: { url: redis.url, keyPrefix: uniquePrefix() } },
    seed: seedFile,
    tokens: { keys: keys.dir, ttlSeconds: 600 },
    passwords: { bcryptCost: 4 },
    signup: { enabled: true },
    // Health and metrics (`adminUrl`) on a listener of their own, as in production:
    // the public one never serves them.
    admin: {},
    ...overrides,
  };
  const gateways: TestGateway[] = [await startTestGateway(config)];
  return {
    redis,
    keys,
    config,
    gw: gateways[0] as TestGateway,
    async startAnother() {
      const another = await startTestGateway(config);
      gateways.push(another);
      return another;
    },
    async close() {
      await Promise.all(gateways.map((g) => g.close()));
      await redis.stop();
      for (const dir of [seedDir, keys.dir]) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** GET /1/token for a user and tenant; returns the parsed body (throws unless 200). */
export async function tokenFor(
  url: string,
  user: { email: string; password: string },
  tenantId: string,
): Promise<{ access_token: string; [k: string]: unknown }> {
  const res = await fetch(`${url}/1/token?tenant_id=${encodeURIComponent(tenantId)}`, {
    headers: { authorization: basic(user.email, user.password) },
  });
  if (res.status !== 200)
    throw new Error(`token request failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as { access_token: string };
}
