/**
 * Issue 34's performance target: token exchanges per second with 1 and with
 * 1,000 configured tenant identity providers — the same within noise, since
 * an exchange reads its tenant's record and chooses the key set by `iss`,
 * never trying other providers' keys. One gateway in this process on the
 * embedded store, one oidc-provider IdP over HTTPS (test/support/oidc-idp.ts);
 * the 999 other records name issuers that are never fetched. Each of
 * `CONNECTIONS` workers sends one exchange at a time for `SECONDS`, the same
 * ID token each time (the user exists after the first: the measured path is
 * verification and issuance). A first round warms up and is not counted.
 *
 * `npx tsx bench/federation.ts`
 */
import { makeTestCa, startTestIdp } from '../test/support/oidc-idp.js';
import { startMemoryIdentityFixture } from '../test/support/identity-fixture.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const PROVIDERS = 1000;
const CLIENT = { clientId: 'gateway-acme', clientSecret: 'acme-secret-0123456789abcdef' };

async function main(): Promise<void> {
  const ca = makeTestCa();
  const idp = await startTestIdp({
    ca,
    alg: 'ES256',
    clients: [CLIENT],
    accounts: { ann: { email: 'ann@acme.test', emailVerified: true } },
  });
  const fx = await startMemoryIdentityFixture({ sso: { enabled: true, ca: ca.caFile } });
  const store = fx.gw.gateway.store;
  const now = Math.floor(Date.now() / 1000);
  const record = { role: 'member' as const, linkExisting: false, updatedAt: now };
  await store.idps.setTenantIdp({
    ...record,
    tenantId: 'acme',
    issuer: idp.issuer,
    clientId: CLIENT.clientId,
    domains: ['acme.test'],
  });
  const token = await idp.idToken('ann');
  const body = new URLSearchParams({
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
    subject_token: token,
    subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
    tenant_id: 'acme',
  }).toString();
  const exchange = async () => {
    const res = await fetch(`${fx.gw.url}/1/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`exchange answered ${res.status}`);
  };
  // Warm-up (JIT, connection pool), not counted.
  await during(exchange);
  const one = await during(exchange);
  for (let i = 1; i < PROVIDERS; i++) {
    const tenantId = `t${i}`;
    await store.tenants.upsertTenant(
      { tenantId, type: 'orgtenant', name: tenantId, cloudRegion: 'local', createdBy: 'bench' },
      now,
    );
    await store.idps.setTenantIdp({
      ...record,
      tenantId,
      issuer: `https://idp-${i}.example.test`,
      clientId: `client-${i}`,
      domains: [`t${i}.example.test`],
    });
  }
  const many = await during(exchange);
  // And back to one: the order of the rounds is not what differs.
  for (let i = 1; i < PROVIDERS; i++) await store.idps.removeTenantIdp(`t${i}`);
  const oneAgain = await during(exchange);
  console.log(
    JSON.stringify({
      connections: CONNECTIONS,
      seconds: SECONDS,
      exchangesPerSecond: {
        providers1: one,
        [`providers${PROVIDERS}`]: many,
        providers1Again: oneAgain,
      },
      ratio: Number((many / ((one + oneAgain) / 2)).toFixed(3)),
    }),
  );
  await fx.close();
  await idp.close();
  ca.close();
}

/** Exchanges per second by `CONNECTIONS` workers, one request at a time each, for `SECONDS`. */
async function during(exchange: () => Promise<void>): Promise<number> {
  const end = Date.now() + SECONDS * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (Date.now() < end) {
        await exchange();
        done += 1;
      }
    }),
  );
  return Math.round(done / SECONDS);
}

await main();
