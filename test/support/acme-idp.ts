/**
 * Acme's identity provider for suites whose subject is not setting it:
 * `oidc-provider` over HTTPS (a test CA), the `sso` config a gateway trusts it
 * with (sealed secrets, `APP` the one redirect URI, loopback allowed), and
 * the record written straight in a gateway's store as the admins' API would
 * write it (secret sealed, `acme.test` verified).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { loadSecretSealer } from '../../src/auth/federation/sealed-secrets.js';
import type { TestGateway } from './gateway.js';
import { makeTestCa, startTestIdp, type IdpAccount, type TestIdp } from './oidc-idp.js';
import { verifyDomains } from './verified-domains.js';

/** The gateway's client at acme's provider. */
export const ACME_IDP_CLIENT = {
  clientId: 'gateway-acme',
  clientSecret: 'acme-secret-0123456789abcdef',
};
/** The application's sign-in landing page: `sso.redirectUris`. */
export const APP = 'https://app.example.test/signed-in';

export interface AcmeIdp {
  idp: TestIdp;
  /** Trusts the provider's CA: for driving its login form. */
  agent: Agent;
  /** The `sso` section of a gateway that signs in with it. */
  sso: Record<string, unknown>;
  /** Makes it acme's provider on `gw` (and `gw`'s callback one of its redirect URIs). */
  provide(gw: TestGateway): Promise<void>;
  close(): Promise<void>;
}

export async function startAcmeIdp(accounts: Record<string, IdpAccount>): Promise<AcmeIdp> {
  const ca = makeTestCa();
  const agent = new Agent({ connect: { ca: ca.ca } });
  const idp = await startTestIdp({ ca, alg: 'ES256', clients: [ACME_IDP_CLIENT], accounts });
  const keyDir = mkdtempSync(join(tmpdir(), 'tg-acme-idp-'));
  const keyFile = join(keyDir, 'sso-secrets.key');
  writeFileSync(keyFile, `${randomBytes(32).toString('base64')}\n`);
  const sealer = await loadSecretSealer(keyFile);
  return {
    idp,
    agent,
    sso: {
      enabled: true,
      ca: ca.caFile,
      secretsKeyFile: keyFile,
      redirectUris: [APP],
      allowPrivateIssuers: true,
    },
    async provide(gw) {
      idp.allowRedirectUri(`${gw.url}/1/sso/callback`);
      await gw.gateway.store.idps.setTenantIdp({
        tenantId: 'acme',
        issuer: idp.issuer,
        clientId: ACME_IDP_CLIENT.clientId,
        clientSecretSealed: sealer.seal(ACME_IDP_CLIENT.clientSecret, 'acme'),
        domains: ['acme.test'],
        role: 'member',
        linkExisting: false,
        updatedAt: Math.floor(Date.now() / 1000),
      });
      await verifyDomains(gw.gateway.store, 'acme', ['acme.test']);
    },
    async close() {
      await idp.close();
      await agent.close();
      ca.close();
      rmSync(keyDir, { recursive: true, force: true });
    },
  };
}
