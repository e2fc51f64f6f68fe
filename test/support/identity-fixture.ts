/**
 * A key directory and a gateway seeded with two users and two org tenants:
 * the world most api and proxy tests start from. Two variants with one API:
 * `startMemoryIdentityFixture` runs on the embedded in-memory store (no
 * redis-server; the default for a suite whose subject is not the store), and
 * `startIdentityFixture` on a private redis-server, for suites about the
 * store, its outages, or several instances sharing one store.
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
  - { email: ${ALICE.email}, password: "${ALICE.password}", name: Alice, email_verified: true }
  - { email: ${BOB.email}, password: "${BOB.password}", email_verified: true }
tenants:
  - { tenant_id: acme, type: orgtenant, name: Acme, cloud_region: eu-west-1, created_by: ${ALICE.email}, members: [${ALICE.email}, ${BOB.email}] }
  - { tenant_id: globex, type: orgtenant, name: Globex, cloud_region: us-east-1, created_by: ${BOB.email}, members: [${BOB.email}] }
`;

/** What both variants give. */
export interface IdentityFixture {
  keys: { dir: string; kid: string; pem: string };
  /** The config every gateway of this fixture runs on. */
  config: Record<string, unknown>;
  gw: TestGateway;
  /**
   * A second gateway on the same config and keys. On Redis it shares the
   * first one's store; on the memory store it has a store of its own, seeded
   * alike (the same users and tenants, but other ids and no shared sessions).
   */
  startAnother(): Promise<TestGateway>;
  close(): Promise<void>;
}

/** The Redis variant: the fixture's private redis-server, to kill, restart or read. */
export interface RedisIdentityFixture extends IdentityFixture {
  redis: TestRedisServer;
}

/** The fixture on the embedded in-memory store: no redis-server is started. */
export async function startMemoryIdentityFixture(
  overrides: Record<string, unknown> = {},
  gatewayOptions: GatewayStartOptions = {},
): Promise<IdentityFixture> {
  return startFixture({}, overrides, async () => {}, gatewayOptions);
}

/**
 * How the fixture's gateways start besides their config: a clock the test
 * moves; the first one's port (a `publicUrl` names it).
 */
export interface GatewayStartOptions {
  clock?: () => number;
  port?: number;
}

/** The fixture on a private redis-server, under a key prefix of its own. */
export async function startIdentityFixture(
  overrides: Record<string, unknown> = {},
): Promise<RedisIdentityFixture> {
  const redis = await startRedisServer();
  try {
    const store = { redis: { url: redis.url, keyPrefix: uniquePrefix() } };
    const fx = await startFixture({ store }, overrides, () => redis.stop());
    return { ...fx, redis };
  } catch (err) {
    await redis.stop();
    throw err;
  }
}

/**
 * The fixture on a redis-server the suite runs already (one server for the
 * describe blocks of a file, each fixture under a key prefix of its own);
 * `close` leaves the server running.
 */
export async function startIdentityFixtureOn(
  redis: TestRedisServer,
  overrides: Record<string, unknown> = {},
): Promise<RedisIdentityFixture> {
  const store = { redis: { url: redis.url, keyPrefix: uniquePrefix() } };
  return { ...(await startFixture({ store }, overrides, async () => {})), redis };
}

async function startFixture(
  store: { store?: unknown },
  overrides: Record<string, unknown>,
  stopStore: () => Promise<void>,
  gatewayOptions: GatewayStartOptions = {},
): Promise<IdentityFixture> {
  const keys = await makeKeysDir();
  const seedDir = mkdtempSync(join(tmpdir(), 'tg-seed-'));
  const seedFile = join(seedDir, 'seed.yaml');
  writeFileSync(seedFile, SEED);
  const config = {
    ...store,
    seed: seedFile,
    passwords: { bcryptCost: 4 },
    signup: { enabled: true },
    // Health and metrics (`adminUrl`) on a listener of their own, as in production:
    // the public one never serves them.
    admin: {},
    ...overrides,
    // Merged, so that every instance keeps the fixture's one key directory.
    tokens: { keys: keys.dir, ttlSeconds: 600, ...(overrides.tokens as object | undefined) },
  };
  const gateways: TestGateway[] = [await startTestGateway(config, gatewayOptions)];
  return {
    keys,
    config,
    gw: gateways[0] as TestGateway,
    async startAnother() {
      const another = await startTestGateway(config, { ...gatewayOptions, port: undefined });
      gateways.push(another);
      return another;
    },
    async close() {
      await Promise.all(gateways.map((g) => g.close()));
      await stopStore();
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

/**
 * The seed users' tokens most admin suites start from, issued in this order:
 * Alice for acme (its creator, so its admin), Bob for acme (a member) and Bob
 * for globex (its creator).
 */
export async function seedTokens(
  url: string,
): Promise<{ aliceAcme: string; bobAcme: string; bobGlobex: string }> {
  const aliceAcme = (await tokenFor(url, ALICE, 'acme')).access_token;
  const bobAcme = (await tokenFor(url, BOB, 'acme')).access_token;
  const bobGlobex = (await tokenFor(url, BOB, 'globex')).access_token;
  return { aliceAcme, bobAcme, bobGlobex };
}
