/**
 * RP-initiated logout's URL (`auth/federation/rp-logout.ts`, issue 44): for a
 * browser session begun at a tenant's IdP, the provider's
 * `end_session_endpoint` from its real discovery document (oidc-provider over
 * HTTPS, fetched through the provider fetcher) with `client_id` and the
 * gateway's sign-in page as `post_logout_redirect_uri`; nothing for a
 * provider without that endpoint, a session not begun at an IdP, a tenant
 * whose record names another issuer now, or a provider that cannot be reached.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProviderHttp, type ProviderHttp } from '../../src/auth/federation/https-json.js';
import { createProviderDiscovery } from '../../src/auth/federation/provider-discovery.js';
import { createEndAtIdp, type EndAtIdp } from '../../src/auth/federation/rp-logout.js';
import type { BrowserSessionRecord } from '../../src/store/browser-sessions.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import type { Store } from '../../src/store/types.js';
import { idp, orgTenant } from '../store/store-fixtures.js';
import { useTestIdps } from '../support/test-idps.js';

const idps = useTestIdps({
  withLogout: { alg: 'RS256', clients: [{ clientId: 'gw-acme', clientSecret: 's'.repeat(32) }] },
  withoutLogout: {
    alg: 'ES256',
    clients: [{ clientId: 'gw-globex', clientSecret: 's'.repeat(32) }],
    rpInitiatedLogout: false,
  },
});

let store: Store;
let http: ProviderHttp;
let endAtIdp: EndAtIdp;

beforeAll(async () => {
  store = createMemoryStore();
  for (const tenant of ['acme', 'globex']) await store.tenants.upsertTenant(orgTenant(tenant), 1);
  await store.idps.setTenantIdp(
    idp('acme', { issuer: idps.withLogout.issuer, clientId: 'gw-acme' }),
  );
  await store.idps.setTenantIdp(
    idp('globex', { issuer: idps.withoutLogout.issuer, clientId: 'gw-globex' }),
  );
  http = createProviderHttp({
    caFile: idps.ca.caFile,
    timeoutMs: 5000,
    allowPrivateAddresses: true,
    failureCacheMs: 0,
  });
  const discovery = createProviderDiscovery({
    http,
    maxAgeMs: 60_000,
    failureCacheMs: 0,
    maxProviders: 10,
  });
  endAtIdp = createEndAtIdp({
    idps: store.idps,
    discovery,
    publicOrigin: 'https://gateway.example.com',
  });
});
afterAll(async () => {
  await http?.close();
});

function session(tenantId: string, issuer: string | undefined): BrowserSessionRecord {
  return {
    sessionId: 'ses_test',
    digest: 'd'.repeat(64),
    userId: 'usr_1',
    email: 'ann@acme.test',
    tenantId,
    role: 'member',
    sessionVersion: 1,
    membershipGeneration: 1,
    createdAt: 1,
    lastSeenAt: 1,
    absoluteExpiresAt: 2,
    userAgent: 'test',
    ip: '127.0.0.1',
    ...(issuer === undefined ? {} : { idp: { issuer, subject: 'ann', sid: 'sid-1' } }),
  };
}

describe('the IdP logout URL of a session', () => {
  it("is the provider's end_session_endpoint with client_id and the sign-in page to come back to", async () => {
    const url = new URL((await endAtIdp(session('acme', idps.withLogout.issuer))) as string);
    expect(`${url.origin}${url.pathname}`).toBe(`${idps.withLogout.issuer}/session/end`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: 'gw-acme',
      post_logout_redirect_uri: 'https://gateway.example.com/1/sign-in',
    });
  });

  it('is undefined when the provider has no end_session_endpoint', async () => {
    expect(await endAtIdp(session('globex', idps.withoutLogout.issuer))).toBeUndefined();
  });

  it('is undefined for a session not begun at an IdP', async () => {
    expect(await endAtIdp(session('acme', undefined))).toBeUndefined();
  });

  it("is undefined when the tenant's record names another issuer now", async () => {
    expect(await endAtIdp(session('acme', idps.withoutLogout.issuer))).toBeUndefined();
  });

  it('is undefined, not an error, when the provider cannot be reached', async () => {
    await idps.withLogout.stop();
    try {
      const fresh = createEndAtIdp({
        idps: store.idps,
        discovery: createProviderDiscovery({
          http,
          maxAgeMs: 60_000,
          failureCacheMs: 0,
          maxProviders: 10,
        }),
        publicOrigin: undefined,
      });
      expect(await fresh(session('acme', idps.withLogout.issuer))).toBeUndefined();
    } finally {
      await idps.withLogout.start();
    }
  });

  it('has no post_logout_redirect_uri without publicUrl', async () => {
    const noOrigin = createEndAtIdp({
      idps: store.idps,
      discovery: createProviderDiscovery({
        http,
        maxAgeMs: 60_000,
        failureCacheMs: 0,
        maxProviders: 10,
      }),
      publicOrigin: undefined,
    });
    const url = new URL((await noOrigin(session('acme', idps.withLogout.issuer))) as string);
    expect(Object.fromEntries(url.searchParams)).toEqual({ client_id: 'gw-acme' });
  });
});
