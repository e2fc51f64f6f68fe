/**
 * The operations on a tenant's identity provider (`/1/tenants/{tenant_id}/idp`,
 * issue 34): the client secret is write-only (`client_secret_set` says
 * whether there is one).
 */
import { adminOperation, NO_STORE, TENANT_GONE } from './admin-operation.js';
import { TenantIdp, TenantIdpSettings } from './idps.js';
import { answer, REQUEST_ID, refusal } from './operation.js';
import { tenantIdParam, TOO_LARGE } from './refusals.js';

const IDP = '/1/tenants/{tenant_id}/idp';
const NO_IDP = 'The tenant has no identity provider (or no longer exists).';
const view = (description: string) => answer(description, TenantIdp, NO_STORE);
const common = { path: IDP, tags: ['identity-providers'], params: tenantIdParam } as const;

export const getTenantIdp = adminOperation({
  ...common,
  method: 'get',
  operationId: 'getTenantIdp',
  summary: "The tenant's identity provider (never its client secret)",
  answers: { 200: view("The tenant's identity provider.") },
  notFound: NO_IDP,
});

export const setTenantIdp = adminOperation({
  ...common,
  method: 'put',
  operationId: 'setTenantIdp',
  summary: "Set the tenant's identity provider, whole",
  body: { schema: TenantIdpSettings, required: true },
  answers: {
    200: view('The identity provider, replaced.'),
    201: view('The identity provider, set where there was none.'),
  },
  refusals: {
    400: refusal(
      'Malformed input (`invalid_request`), or a domain the tenant has not verified (`domain_not_verified`).',
      'invalid_request',
      'domain_not_verified',
    ),
    409: refusal(
      "Another tenant's identity provider has this issuer and client id: one issuer may serve several tenants, each through a client of its own.",
      'issuer_in_use',
    ),
    413: TOO_LARGE,
  },
  notFound: TENANT_GONE,
});

export const removeTenantIdp = adminOperation({
  ...common,
  method: 'delete',
  operationId: 'removeTenantIdp',
  summary: "Remove the tenant's identity provider",
  answers: { 204: { description: 'Removed.', headers: REQUEST_ID } },
  notFound: NO_IDP,
});
