/**
 * acme's and globex's identity providers set as their admins set them
 * (issue 44's company sign-in suites): each tenant's e-mail domain verified by
 * the operator, then `PUT /1/tenants/{tenant_id}/idp` with the provider's
 * issuer, its client (secret sealed by the gateway) and the domain.
 */
import { expect } from 'vitest';
import type { Store } from '../../src/store/types.js';
import { bearerJson } from './gateway.js';
import { ALICE, BOB, tokenFor } from './identity-fixture.js';
import type { TestIdp } from './oidc-idp.js';
import { ACME_CLIENT, GLOBEX_CLIENT } from './token-exchange.js';
import { verifyDomains } from './verified-domains.js';

/** acme (`acme.test`, Alice its admin) and globex (`globex.test`, Bob) get `idps.acme` and `idps.globex`. */
export async function setCompanyIdps(
  gatewayUrl: string,
  store: Store,
  idps: { acme: TestIdp; globex: TestIdp },
): Promise<void> {
  for (const [tenant, admin, idp, client, domain] of [
    ['acme', ALICE, idps.acme, ACME_CLIENT, 'acme.test'],
    ['globex', BOB, idps.globex, GLOBEX_CLIENT, 'globex.test'],
  ] as const) {
    await verifyDomains(store, tenant, [domain]);
    const { access_token } = await tokenFor(gatewayUrl, admin, tenant);
    const put = await bearerJson(gatewayUrl, 'PUT', `/1/tenants/${tenant}/idp`, access_token, {
      issuer: idp.issuer,
      client_id: client.clientId,
      client_secret: client.clientSecret,
      domains: [domain],
    });
    expect(put.status).toBe(201);
  }
}
