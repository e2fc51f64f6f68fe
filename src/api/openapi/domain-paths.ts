/**
 * OpenAPI operations and schemas of a tenant's e-mail domains
 * (`/1/tenants/{tenant_id}/domains`, issue 42): the caller is a user, admin
 * of the token's tenant; a domain is proven by a DNS TXT record.
 */
import {
  BAD_INPUT,
  BEARER_REFUSED,
  BUG,
  type Json,
  json,
  ref,
  refusal,
  REQUEST_ID_HEADER,
  STORE_DOWN,
  TOO_LARGE,
} from './answers.js';

const tenantIdParameter = {
  name: 'tenant_id',
  in: 'path',
  required: true,
  description: "The token's tenant id, or `current`.",
  schema: { type: 'string' },
};

const domainParameter = {
  name: 'domain',
  in: 'path',
  required: true,
  description: 'The e-mail domain (a DNS name; compared lower-cased).',
  schema: { type: 'string' },
};

const NO_STORE = { 'Cache-Control': { schema: { const: 'no-store' } } };
const TAKEN = refusal(
  'Another tenant has verified this domain: a verified domain belongs to one tenant.',
  'domain_taken',
);

function operation(
  operationId: string,
  summary: string,
  responses: Json,
  notFound: string,
  extra: { domain?: boolean; requestBody?: Json } = {},
): Json {
  return {
    operationId,
    summary,
    tags: ['identity-providers'],
    security: [{ bearer: [] }],
    parameters: extra.domain === true ? [tenantIdParameter, domainParameter] : [tenantIdParameter],
    ...(extra.requestBody === undefined ? {} : { requestBody: extra.requestBody }),
    responses: {
      ...responses,
      '401': BEARER_REFUSED,
      '403': refusal(
        "The path names a tenant other than the token's (`tenant_mismatch`); or the caller is not, now, an admin of the tenant, is not a user, or the tenant is a personal one (`forbidden`).",
        'tenant_mismatch',
        'forbidden',
      ),
      '404': refusal(notFound, 'not_found'),
      '500': BUG,
      '503': STORE_DOWN,
    },
  };
}

const view = (description: string): Json => ({
  description,
  headers: { ...REQUEST_ID_HEADER, ...NO_STORE },
  content: json(ref('TenantDomain')),
});

/** `/1/tenants/{tenant_id}/domains` */
export function domainsPath(): Json {
  return {
    get: operation(
      'listTenantDomains',
      "The tenant's e-mail domains, verified or not",
      {
        '200': {
          description: "The tenant's domains, by name.",
          headers: { ...REQUEST_ID_HEADER, ...NO_STORE },
          content: json({
            type: 'object',
            additionalProperties: false,
            required: ['domains'],
            properties: { domains: { type: 'array', items: ref('TenantDomain') } },
          }),
        },
      },
      'The tenant was removed after the token was issued.',
    ),
    post: operation(
      'addTenantDomain',
      'Claim an e-mail domain: answers the DNS TXT record that proves it',
      {
        '200': view('The tenant has the domain already: it, as it is.'),
        '201': view('The domain, unverified, with its TXT challenge.'),
        '400': refusal(
          'Malformed input, or the tenant holds 100 domains already (`invalid_request`).',
          'invalid_request',
        ),
        '409': TAKEN,
        '413': TOO_LARGE,
      },
      'The tenant was removed after the token was issued.',
      { requestBody: { required: true, content: json(ref('TenantDomainClaim')) } },
    ),
  };
}

/** `/1/tenants/{tenant_id}/domains/{domain}` */
export function domainPath(): Json {
  return {
    delete: operation(
      'removeTenantDomain',
      'Remove an e-mail domain (an IdP naming it no longer signs anyone in with it)',
      { '204': { description: 'Removed.', headers: REQUEST_ID_HEADER }, '400': BAD_INPUT },
      'The tenant has no such domain (or no longer exists).',
      { domain: true },
    ),
  };
}

/** `/1/tenants/{tenant_id}/domains/{domain}/verify` */
export function domainVerifyPath(): Json {
  const unavailable = refusal(
    'The store is unreachable, or the DNS could not be asked (`unavailable`).',
    'unavailable',
  );
  const verify = operation(
    'verifyTenantDomain',
    "Verify an e-mail domain by its TXT record (`sso.dnsServers`, else the system's resolvers)",
    {
      '200': view('The domain, verified.'),
      '400': refusal(
        'Malformed domain (`invalid_request`), or no TXT record of `txt_name` holds `txt_value` (`domain_not_verified`).',
        'invalid_request',
        'domain_not_verified',
      ),
      '409': TAKEN,
    },
    'The tenant has no such domain (or no longer exists).',
    { domain: true },
  );
  return {
    post: { ...verify, responses: { ...(verify['responses'] as Json), '503': unavailable } },
  };
}

/** The schemas, to spread into `components.schemas`. */
export function domainSchemas(): Json {
  const domain = { type: 'string', description: 'The e-mail domain, lower-case' };
  return {
    TenantDomainClaim: {
      type: 'object',
      additionalProperties: false,
      required: ['domain'],
      properties: { domain: { type: 'string', description: 'A DNS name such as example.com' } },
    },
    TenantDomain: {
      type: 'object',
      additionalProperties: false,
      required: ['domain', 'verified'],
      properties: {
        domain,
        verified: { type: 'boolean' },
        verified_at: { type: 'integer', description: 'Unix seconds; only once verified' },
        txt_name: {
          type: 'string',
          description:
            'Only while unverified: the DNS name to publish a TXT record at (`_tenant-gateway-challenge.<domain>`)',
        },
        txt_value: {
          type: 'string',
          description: 'Only while unverified: the value of the TXT record',
        },
      },
    },
  };
}
