/**
 * Issue 30, item 9: a reload never reports success for a change it ignored.
 * For every top-level key of the config schema (read from the zod schema, so
 * a key added later fails here until it is decided), a running gateway is
 * reloaded with that key changed, and the change is either seen taking
 * effect or named in `needsRestart` — nothing in between.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema, validateConfig } from '../../src/config/index.js';
import { totpKeyFile } from '../support/totp.js';
import { signUp, type Credentials } from '../support/account-requests.js';
import { basic, startTestGateway, type TestGateway } from '../support/gateway.js';
import { startRedisServer, type TestRedisServer } from '../support/redis-server.js';
import { startEchoUpstream, type CountingUpstream } from '../support/upstream.js';

const KEYS = Object.keys(configSchema.shape);

interface Case {
  /** The key's new value. */
  change: unknown;
  /** Keys added to the running gateway's config (the case's own set-up). */
  base?: Record<string, unknown>;
  /** The case's Redis is killed once the gateway is up (and restarted after). */
  storeDown?: boolean;
  /**
   * For a key a reload applies at once: what a client sees of it, before
   * and after the reload. Without it, the key must be named in needsRestart.
   */
  live?: { observe: (gw: TestGateway) => Promise<unknown>; before: unknown; after: unknown };
}

let echo: CountingUpstream;
let redis: TestRedisServer;
beforeAll(async () => {
  [echo, redis] = await Promise.all([startEchoUpstream(), startRedisServer()]);
});
afterAll(async () => {
  await echo?.close();
  await redis?.stop();
});

/** What the echo upstream received for a GET of the public route `/a`. */
async function echoed(gw: TestGateway, headers: Record<string, string>) {
  const res = await fetch(`${gw.url}/a`, { headers });
  expect(res.status).toBe(200);
  return ((await res.json()) as { headers: Record<string, string | undefined> }).headers;
}

/** A new user, `<name>@example.com`, signs up on `gw`: its credentials and the answer's ids. */
async function signUpSomeone(
  gw: TestGateway,
  name: string,
): Promise<{ who: Credentials; user_id: string; tenant_id: string }> {
  const who = { email: `${name}@example.com`, password: 'a-long-password-1' };
  const ids = (await (await signUp(gw.url, who)).json()) as { user_id: string; tenant_id: string };
  return { who, ...ids };
}

/** A new user signs up and takes a token for its personal tenant: the token response. */
async function personalToken(gw: TestGateway): Promise<unknown> {
  const { who, tenant_id } = await signUpSomeone(gw, `u${Math.random().toString(36).slice(2)}`);
  const res = await fetch(`${gw.url}/1/token?tenant_id=${tenant_id}`, {
    headers: { authorization: basic(who.email, who.password) },
  });
  expect(res.status).toBe(200);
  return res.json();
}

const publicRoute = (prefix: string) => ({ prefix, upstream: echo.url, auth: 'none' });

/** One case per top-level key: its changed value, and for a live key what shows it. */
function cases(): Record<string, Case> {
  return {
    publicUrl: { change: 'https://gw.example.com' },
    listen: { change: { host: '127.0.0.1', port: 1 } },
    admin: { change: { host: '127.0.0.1', port: 0, configReload: true } },
    forwardAuth: { change: { host: '127.0.0.1', port: 0 } },
    store: { change: { redis: { url: 'redis://127.0.0.1:1/0' } } },
    seed: { change: './seed.yaml' },
    tokens: { change: { ttlSeconds: 900 } },
    revocation: { change: { mode: 'plain' } },
    signup: { change: { enabled: true } },
    passwords: { change: { bcryptCost: 5 } },
    limits: { change: { bodyBytes: 32768 } },
    audit: { change: { maxEventsPerStream: 500 } },
    server: { change: { keepAliveTimeoutMs: 30_000 } },
    upstreamPool: { change: { maxConnections: 64 } },
    rateLimits: { change: { reconcileIntervalMs: 250 } },
    trustedProxies: {
      change: ['127.0.0.0/8'],
      live: {
        // A client's X-Forwarded-For is kept only from a trusted peer.
        observe: async (gw) =>
          (await echoed(gw, { 'x-forwarded-for': '203.0.113.9' }))['x-forwarded-for']?.startsWith(
            '203.0.113.9, ',
          ),
        before: false,
        after: true,
      },
    },
    identityHeaders: {
      change: { userId: 'X-Who' },
      live: {
        // An identity header is stripped from clients: the new name now is.
        observe: async (gw) => (await echoed(gw, { 'x-who': 'spoofed' }))['x-who'],
        before: 'spoofed',
        after: undefined,
      },
    },
    stripHeaders: {
      change: { add: ['X-Secret'] },
      live: {
        observe: async (gw) => (await echoed(gw, { 'x-secret': 'kept?' }))['x-secret'],
        before: 'kept?',
        after: undefined,
      },
    },
    routes: {
      change: [publicRoute('/a'), publicRoute('/b')],
      live: {
        observe: async (gw) => (await fetch(`${gw.url}/b`)).status,
        before: 404,
        after: 200,
      },
    },
    authorization: {
      change: {
        roles: { admin: ['catalog:write', 'catalog:read'] },
        clientScopes: ['catalog:read', 'catalog:write'],
      },
      base: { signup: { enabled: true }, authorization: { clientScopes: ['catalog:read'] } },
      live: {
        // A new token carries the scopes of its role (the personal tenant's owner is its admin),
        // and a tenant admin may give a new machine client the scopes configured now.
        observe: async (gw) => [
          ((await personalToken(gw)) as { scope?: unknown }).scope,
          await clientCreation(gw, ['catalog:write']),
        ],
        before: ['', 400],
        after: ['catalog:read catalog:write', 201],
      },
    },
    cors: {
      change: { origins: ['https://app.example.com'] },
      live: {
        observe: async (gw) =>
          (
            await fetch(`${gw.url}/1/token`, {
              method: 'OPTIONS',
              headers: {
                origin: 'https://app.example.com',
                'access-control-request-method': 'GET',
              },
            })
          ).headers.get('access-control-allow-origin'),
        before: null,
        after: 'https://app.example.com',
      },
    },
    apiKeys: { change: { enabled: true } },
    sso: { change: { redirectUris: ['https://app.example.com/signed-in'] } },
    sessions: { change: { idleTimeoutSeconds: 600 } },
    mail: {
      change: { smtp: 'smtp://127.0.0.1:9', from: 'gw@example.com' },
      base: { publicUrl: 'https://gw.example.com' },
    },
    mfa: { change: { totp: { enabled: true, secretsKeyFile: totpKeyFile() } } },
    console: { change: { enabled: true }, base: { sessions: { enabled: true } } },
    log: { change: { level: 'warn' } },
    tracing: { change: { enabled: true } },
    readiness: {
      change: { requireStore: true },
      // A store that is down: ready by default, unready once the store is required.
      base: { store: { redis: { url: redis.url, commandTimeoutMs: 200 } } },
      storeDown: true,
      live: {
        observe: async (gw) => (await fetch(`${gw.adminUrl as string}/readyz`)).json(),
        before: { status: 'ready', store: 'unreachable' },
        after: { status: 'not ready', reasons: ['store unreachable'], store: 'unreachable' },
      },
    },
    demo: { change: { echoUpstream: { port: 9 } } },
    shutdown: { change: { drainSeconds: 3 } },
  };
}

/** The config a case's gateway runs: as startTestGateway runs it (listen, admin, log fixed). */
function running(kase: Case): Record<string, unknown> {
  return {
    listen: { host: '127.0.0.1', port: 0 },
    admin: { host: '127.0.0.1', port: 0 },
    log: { level: 'silent' },
    passwords: { bcryptCost: 4 },
    routes: [publicRoute('/a')],
    ...kase.base,
  };
}

describe('reload, key by key', () => {
  it('has a case for every top-level key of the schema, and no other', () => {
    expect(Object.keys(cases()).sort()).toEqual([...KEYS].sort());
  });

  it.each(KEYS)('%s: applied at once, or named in needsRestart', async (key) => {
    const kase = cases()[key];
    if (kase === undefined)
      throw new Error(
        `${key}: no case here. Decide what a reload does with it (src/gateway.ts ON_RELOAD): show its live effect here, or expect it in needsRestart`,
      );
    const raw = running(kase);
    const gw = await startTestGateway(raw);
    try {
      if (kase.storeDown === true) await redis.kill();
      if (kase.live !== undefined) expect(await kase.live.observe(gw)).toEqual(kase.live.before);
      const next = validateConfig({ ...raw, [key]: kase.change }, process.cwd(), 'test');
      const { needsRestart } = await gw.gateway.reload(next);
      if (kase.live === undefined) {
        expect(needsRestart).toEqual([key]);
      } else {
        expect(needsRestart).toEqual([]);
        expect(await kase.live.observe(gw)).toEqual(kase.live.after);
      }
    } finally {
      if (kase.storeDown === true) await redis.restart();
      await gw.close();
    }
  });
});

/**
 * The status of a machine client's creation with `scopes`, by the admin (a
 * new user) of a new org tenant.
 */
async function clientCreation(gw: TestGateway, scopes: string[]): Promise<number> {
  const id = Math.random().toString(36).slice(2, 10);
  const { who, user_id } = await signUpSomeone(gw, `admin-${id}`);
  const tenant = { tenantId: `org-${id}`, type: 'orgtenant' as const, name: id, cloudRegion: 'x' };
  await gw.gateway.store.tenants.upsertTenant(
    { ...tenant, createdBy: who.email },
    Math.floor(Date.now() / 1000),
  );
  await gw.gateway.store.memberships.addMember(tenant.tenantId, user_id, 'admin');
  const token = await fetch(`${gw.url}/1/token?tenant_id=${tenant.tenantId}`, {
    headers: { authorization: basic(who.email, who.password) },
  });
  const { access_token } = (await token.json()) as { access_token: string };
  const res = await fetch(`${gw.url}/1/tenants/current/clients`, {
    method: 'POST',
    headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'ci', scopes }),
  });
  return res.status;
}
