/**
 * Records, clocks and event watching shared by the store contract suite's
 * files (`store-contract.ts` and `store-contract-<slice>.ts`).
 */
import { createHash, randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import type {
  BrowserSessionRecord,
  NewApiKey,
  NewClient,
  NewUser,
  PasskeyRecord,
  RefreshFamily,
  SessionEvent,
  Store,
  TenantIdp,
  TenantInput,
} from '../../src/store/types.js';

export const NOW = 1_700_000_000;

/** A refresh token's idle lifetime in the refresh contract (seconds). */
export const IDLE = 3600;

/** A user with a personal tenant; ids unique unless given. */
export function newUser(
  overrides: Partial<Omit<NewUser, 'personalTenant'>> = {},
  tenantId?: string,
): NewUser {
  const unique = randomUUID().slice(0, 8);
  const email = overrides.email ?? `user-${unique}@example.com`;
  return {
    id: `u-${unique}`,
    email,
    name: `User ${unique}`,
    passwordHash: `$2b$10$hash-${unique}`,
    createdAt: NOW,
    ...overrides,
    personalTenant: {
      tenantId: tenantId ?? `p-${unique}`,
      type: 'usertenant',
      name: `Personal ${unique}`,
      createdAt: NOW,
      modifiedAt: NOW,
      cloudRegion: 'eu-west-1',
      createdBy: email.trim().toLowerCase(),
    },
  };
}

export function orgTenant(tenantId: string, overrides: Partial<TenantInput> = {}): TenantInput {
  return {
    tenantId,
    type: 'orgtenant',
    name: `Org ${tenantId}`,
    cloudRegion: 'eu-west-1',
    createdBy: 'admin@example.com',
    ...overrides,
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export async function waitUntil(condition: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(10);
  }
}

export function distinct(events: SessionEvent[]): SessionEvent[] {
  return [...new Set(events.map((e) => JSON.stringify(e)))].map(
    (e) => JSON.parse(e) as SessionEvent,
  );
}

/** Watches the store's session events; resolves once delivery is live. */
export async function watchLive(
  store: Store,
): Promise<{ events: SessionEvent[]; stop: () => void }> {
  const events: SessionEvent[] = [];
  let live = false;
  const stop = store.revocations.watchSessions({
    onEvent: (e) => events.push(e),
    onLive: (v) => (live = v),
  });
  await waitUntil(() => live);
  return { events, stop };
}

export const digest = (secret: string): string => createHash('sha256').update(secret).digest('hex');
export const newDigest = (): string => digest(randomUUID());
export const realNow = (): number => Math.floor(Date.now() / 1000);

/**
 * A family on one scope, at session 0 and membership generation 1, with no
 * access token yet: it ends `absoluteTtl` seconds from now and is idle after
 * `idle`.
 */
export function plainFamily(
  absoluteTtl: number,
  idle: number,
  overrides: Partial<RefreshFamily> = {},
): RefreshFamily {
  const now = realNow();
  return newFamily({
    scope: 'orders:read',
    sessionVersion: 0,
    membershipGeneration: 1,
    absoluteExpiresAt: now + absoluteTtl,
    currentExpiresAt: now + idle,
    accessTokens: {},
    ...overrides,
  });
}

/** A live refresh family of a user of `acme`, around the real clock. */
export function newFamily(overrides: Partial<RefreshFamily> = {}): RefreshFamily {
  const now = realNow();
  return {
    familyId: `rf-${randomUUID()}`,
    userId: `u-${randomUUID().slice(0, 8)}`,
    tenantId: 'acme',
    scope: 'orders:read orders:write',
    sessionVersion: 2,
    membershipGeneration: 7,
    createdAt: now,
    absoluteExpiresAt: now + 30 * 86_400,
    currentDigest: newDigest(),
    currentExpiresAt: now + IDLE,
    accessTokens: { [randomUUID()]: now + 900 },
    revoked: false,
    ...overrides,
  };
}

/** An identity provider record of `tenantId`. */
export function idp(tenantId: string, overrides: Partial<TenantIdp> = {}): TenantIdp {
  return {
    tenantId,
    issuer: `https://idp.example.com/realms/${tenantId}`,
    clientId: `gateway-${tenantId}`,
    domains: [`${tenantId}.example.com`],
    role: 'member',
    linkExisting: false,
    updatedAt: NOW,
    ...overrides,
  };
}

let serial = 0;

/** A machine client of `tenantId`, its id unique. */
export function newClient(tenantId: string, overrides: Partial<NewClient> = {}): NewClient {
  serial++;
  return {
    clientId: `tgc_contract${String(serial).padStart(4, '0')}${Math.random().toString(36).slice(2, 8)}`,
    tenantId,
    name: `client ${serial}`,
    scopes: ['orders:write', 'orders:read', 'orders:read'],
    secretDigest: 'a'.repeat(64),
    createdAt: NOW,
    ...overrides,
  };
}

/** An API key of `clientId`, its id unique. */
export function newKey(clientId: string, overrides: Partial<NewApiKey> = {}): NewApiKey {
  serial++;
  return {
    keyId: `tgkid_k${String(serial).padStart(4, '0')}${Math.random().toString(36).slice(2, 8)}`,
    clientId,
    digest: 'b'.repeat(64),
    createdAt: NOW,
    ...overrides,
  };
}

/** The GatewayError `promise` rejects with. */
export async function rejectionOf(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error('expected the call to reject');
}

/**
 * The store of the running test, read anew at each use: for a contract part
 * registered once but run on a fresh store per test.
 */
export function storeOf(current: () => Store): Store {
  return new Proxy({} as Store, { get: (_, name) => Reflect.get(current(), name) as unknown });
}

/** A browser session of a user of `acme`, begun now and ending in a day, around the real clock. */
export function newBrowserSession(
  overrides: Partial<BrowserSessionRecord> = {},
): BrowserSessionRecord {
  const now = realNow();
  return {
    sessionId: `ses_${randomUUID().replaceAll('-', '').slice(0, 22)}`,
    digest: newDigest(),
    userId: `u-${randomUUID().slice(0, 8)}`,
    email: 'alice@example.com',
    tenantId: 'acme',
    role: 'member',
    sessionVersion: 2,
    membershipGeneration: 7,
    createdAt: now,
    lastSeenAt: now,
    absoluteExpiresAt: now + 86_400,
    userAgent: 'Mozilla/5.0 (X11; Linux x86_64) — test',
    ip: '203.0.113.7',
    ...overrides,
  };
}

/** A passkey of `userId`; its ids unique unless given. */
export function newPasskey(userId: string, overrides: Partial<PasskeyRecord> = {}): PasskeyRecord {
  const unique = randomUUID().replaceAll('-', '');
  return {
    passkeyId: `pk_${unique.slice(0, 16)}`,
    credentialId: `cred-${unique}`,
    userId,
    publicKey: 'pQECAyYgASFYIA',
    counter: 0,
    transports: ['internal', 'hybrid'],
    name: 'Laptop',
    createdAt: NOW,
    ...overrides,
  };
}
