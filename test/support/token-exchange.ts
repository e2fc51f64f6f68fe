/**
 * A tenant's identity provider in the suites about it (issue 34): the test
 * IdPs' clients of acme and globex, the RFC 8693 exchange of an ID token the
 * way a client sends it, and an IdP record written straight to the store (as
 * the operator's tooling would) for suites whose subject is not the admin API.
 */
import type { TenantIdp } from '../../src/store/idps.js';
import type { Store } from '../../src/store/types.js';
import { tokenRequest } from './token-endpoint.js';
import { verifyDomains } from './verified-domains.js';

export const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';
/** The gateway's client at acme's provider. */
export const ACME_CLIENT = {
  clientId: 'gateway-acme',
  clientSecret: 'acme-secret-0123456789abcdef',
};
/** The gateway's client at globex's provider. */
export const GLOBEX_CLIENT = {
  clientId: 'gateway-globex',
  clientSecret: 'globex-secret-0123456789abc',
};

/** POST /1/oauth/token: `subjectToken` (an ID token) exchanged for a token of `tenantId`. */
export function exchangeAt(
  url: string,
  subjectToken: string,
  tenantId: string,
  extra: Record<string, string> = {},
): Promise<Response> {
  return tokenRequest(url, {
    grant_type: EXCHANGE,
    subject_token: subjectToken,
    subject_token_type: ID_TOKEN,
    tenant_id: tenantId,
    ...extra,
  });
}

/**
 * The tenant's `domains` verified and its IdP record stored: role `member`,
 * no linking of existing users, unless `record` says otherwise.
 */
export async function storeTenantIdp(
  store: Store,
  record: Pick<TenantIdp, 'tenantId' | 'issuer' | 'clientId' | 'domains'> & Partial<TenantIdp>,
): Promise<void> {
  await verifyDomains(store, record.tenantId, record.domains);
  await store.idps.setTenantIdp({
    role: 'member',
    linkExisting: false,
    updatedAt: Math.floor(Date.now() / 1000),
    ...record,
  });
}
