/**
 * OpenAPI operations and schemas of a tenant's identity provider
 * (`/1/tenants/{tenant_id}/idp`, issue 34): the caller is a user, admin of
 * the token's tenant; the client secret is write-only (`client_secret_set`
 * says whether there is one).
 */
import {
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

const NO_STORE = { 'Cache-Control': { schema: { const: 'no-store' } } };
const TENANT_GONE = 'The tenant was removed after the token was issued.';

function operation(
  operationId: string,
  summary: string,
  responses: Json,
  notFound: string,
  requestBody?: Json,
): Json {
  return {
    operationId,
    summary,
    tags: ['identity-providers'],
    security: [{ bearer: [] }],
    parameters: [tenantIdParameter],
    ...(requestBody === undefined ? {} : { requestBody }),
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
  content: json(ref('TenantIdp')),
});

/** `/1/tenants/{tenant_id}/idp` */
export function idpPath(): Json {
  return {
    get: operation(
      'getTenantIdp',
      "The tenant's identity provider (never its client secret)",
      { '200': view("The tenant's identity provider.") },
      'The tenant has no identity provider (or no longer exists).',
    ),
    put: operation(
      'setTenantIdp',
      "Set the tenant's identity provider, whole",
      {
        '200': view('The identity provider, replaced.'),
        '201': view('The identity provider, set where there was none.'),
        '400': refusal(
          'Malformed input (`invalid_request`), or a domain the tenant has not verified (`domain_not_verified`).',
          'invalid_request',
          'domain_not_verified',
        ),
        '409': refusal(
          "Another tenant's identity provider has this issuer and client id: one issuer may serve several tenants, each through a client of its own.",
          'issuer_in_use',
        ),
        '413': TOO_LARGE,
      },
      TENANT_GONE,
      { required: true, content: json(ref('TenantIdpSettings')) },
    ),
    delete: operation(
      'removeTenantIdp',
      "Remove the tenant's identity provider",
      { '204': { description: 'Removed.', headers: REQUEST_ID_HEADER } },
      'The tenant has no identity provider (or no longer exists).',
    ),
  };
}

/** The schemas, to spread into `components.schemas`. */
export function idpSchemas(): Json {
  const issuer = {
    type: 'string',
    maxLength: 1024,
    pattern: '^https://[^?#\\s]+$',
    description:
      "The IdP's issuer, exactly as its tokens name it (`iss`): compared exactly, never normalised",
  };
  const clientId = {
    type: 'string',
    minLength: 1,
    maxLength: 255,
    pattern: '^[\\x21-\\x7e]+$',
    description: "The gateway's client id at the IdP (an ID token's `aud`)",
  };
  const domains = {
    type: 'array',
    minItems: 1,
    maxItems: 100,
    items: { type: 'string' },
    description: 'E-mail domains whose verified addresses may sign in (DNS names)',
  };
  const role = {
    type: 'string',
    enum: ['admin', 'member'],
    description: 'The role a user gets in the tenant at first sign-in',
  };
  const linkExisting = {
    type: 'boolean',
    description: 'Whether a local user with the same verified e-mail may be linked',
  };
  return {
    TenantIdpSettings: {
      type: 'object',
      additionalProperties: false,
      required: ['issuer', 'client_id', 'domains'],
      properties: {
        issuer,
        client_id: clientId,
        client_secret: {
          type: ['string', 'null'],
          minLength: 1,
          maxLength: 1024,
          writeOnly: true,
          description:
            'Write-only, stored sealed (needs `sso.secretsKeyFile`). Omitted: the stored one is kept while `issuer` and `client_id` stay the same; null: none',
        },
        domains,
        role: { ...role, default: 'member' },
        link_existing: { ...linkExisting, default: false },
      },
    },
    TenantIdp: {
      type: 'object',
      additionalProperties: false,
      required: [
        'tenant_id',
        'issuer',
        'client_id',
        'client_secret_set',
        'domains',
        'role',
        'link_existing',
        'updated_at',
      ],
      properties: {
        tenant_id: { type: 'string' },
        issuer,
        client_id: clientId,
        client_secret_set: { type: 'boolean', description: 'Whether a client secret is stored' },
        domains: { ...domains, description: 'Lower-case, sorted, without duplicates' },
        role,
        link_existing: linkExisting,
        updated_at: { type: 'integer', description: 'Unix seconds of the last set' },
      },
    },
  };
}
