/**
 * The operations on a tenant's e-mail domains (`/1/tenants/{tenant_id}/domains`,
 * issue 42): a domain is proven by a DNS TXT record.
 */
import { z } from 'zod';
import { adminOperation, NO_STORE, TENANT_GONE } from './admin-operation.js';
import { TenantDomain, TenantDomainClaim, TenantDomainList } from './domains.js';
import { answer, REQUEST_ID, refusal } from './operation.js';
import { BAD_INPUT, tenantIdParam, TOO_LARGE } from './refusals.js';

const DOMAINS = '/1/tenants/{tenant_id}/domains';
const domainParams = tenantIdParam.extend({
  domain: z.string().meta({ description: 'The e-mail domain (a DNS name; compared lower-cased).' }),
});
const NO_DOMAIN = 'The tenant has no such domain (or no longer exists).';
const TAKEN = refusal(
  'Another tenant has verified this domain: a verified domain belongs to one tenant.',
  'domain_taken',
);
const view = (description: string) => answer(description, TenantDomain, NO_STORE);
const tags = ['identity-providers'];

export const listTenantDomains = adminOperation({
  method: 'get',
  path: DOMAINS,
  operationId: 'listTenantDomains',
  summary: "The tenant's e-mail domains, verified or not",
  tags,
  params: tenantIdParam,
  answers: { 200: answer("The tenant's domains, by name.", TenantDomainList, NO_STORE) },
  notFound: TENANT_GONE,
});

export const addTenantDomain = adminOperation({
  method: 'post',
  path: DOMAINS,
  operationId: 'addTenantDomain',
  summary: 'Claim an e-mail domain: answers the DNS TXT record that proves it',
  tags,
  params: tenantIdParam,
  body: { schema: TenantDomainClaim, required: true },
  answers: {
    200: view('The tenant has the domain already: it, as it is.'),
    201: view('The domain, unverified, with its TXT challenge.'),
  },
  refusals: {
    400: refusal(
      'Malformed input, or the tenant holds 100 domains already (`invalid_request`).',
      'invalid_request',
    ),
    409: TAKEN,
    413: TOO_LARGE,
  },
  notFound: TENANT_GONE,
});

export const removeTenantDomain = adminOperation({
  method: 'delete',
  path: `${DOMAINS}/{domain}`,
  operationId: 'removeTenantDomain',
  summary: 'Remove an e-mail domain (an IdP naming it no longer signs anyone in with it)',
  tags,
  params: domainParams,
  answers: { 204: { description: 'Removed.', headers: REQUEST_ID } },
  refusals: { 400: BAD_INPUT },
  notFound: NO_DOMAIN,
});

export const verifyTenantDomain = adminOperation({
  method: 'post',
  path: `${DOMAINS}/{domain}/verify`,
  operationId: 'verifyTenantDomain',
  summary:
    "Verify an e-mail domain by its TXT record (`sso.dnsServers`, else the system's resolvers)",
  tags,
  params: domainParams,
  answers: { 200: view('The domain, verified.') },
  refusals: {
    400: refusal(
      'Malformed domain (`invalid_request`), or no TXT record of `txt_name` holds `txt_value` (`domain_not_verified`).',
      'invalid_request',
      'domain_not_verified',
    ),
    409: TAKEN,
    503: refusal(
      'The store is unreachable, or the DNS could not be asked (`unavailable`).',
      'unavailable',
    ),
  },
  notFound: NO_DOMAIN,
});
