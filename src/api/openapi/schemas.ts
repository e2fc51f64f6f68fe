/**
 * The OpenAPI components: security schemes, the request-id header, and the
 * schemas of every body the gateway reads or writes.
 */
import { ERROR_CODES } from '../../errors.js';
import { type Json, ref } from './answers.js';
import { clientSchemas } from './client-schemas.js';
import { domainSchemas } from './domain-paths.js';
import { idpSchemas } from './idp-paths.js';

/** `components` of the document. */
export function components(): Json {
  return {
    securitySchemes: {
      basic: { type: 'http', scheme: 'basic', description: 'e-mail and password' },
      bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
    },
    headers: {
      RequestId: {
        description: "The request's id: the client's when well-formed, else a new one.",
        schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' },
      },
    },
    schemas: {
      Error: errorSchema(),
      ...tenantSchemas(),
      TokenResponse: tokenResponseSchema(),
      ClientTokenResponse: clientTokenResponseSchema(),
      RefreshTokenResponse: refreshTokenResponseSchema(),
      TokenExchangeResponse: tokenExchangeResponseSchema(),
      AuthorizationServerMetadata: authorizationServerMetadataSchema(),
      ...userSchemas(),
      ...clientSchemas(),
      ...idpSchemas(),
      ...domainSchemas(),
      JwkSet: jwkSetSchema(),
    },
  };
}

function errorSchema(): Json {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['error', 'error_description'],
    properties: {
      error: {
        type: 'string',
        enum: ERROR_CODES,
        description: 'The stable CODE to switch on.',
      },
      error_description: { type: 'string', minLength: 1 },
    },
  };
}

function tenantSchemas(): Json {
  return {
    TenantType: { type: 'string', enum: ['usertenant', 'orgtenant'] },
    TenantSummary: {
      type: 'object',
      additionalProperties: false,
      required: ['tenant_id', 'type', 'name'],
      properties: {
        tenant_id: { type: 'string' },
        type: ref('TenantType'),
        name: { type: 'string' },
      },
    },
    TenantList: {
      type: 'object',
      additionalProperties: false,
      required: ['tenants'],
      properties: { tenants: { type: 'array', items: ref('TenantSummary') } },
    },
    Tenant: {
      type: 'object',
      additionalProperties: false,
      required: [
        'tenant_id',
        'type',
        'name',
        'created_at',
        'modified_at',
        'cloud_region',
        'created_by',
      ],
      properties: {
        tenant_id: { type: 'string' },
        type: ref('TenantType'),
        name: { type: 'string' },
        created_at: { type: 'integer', description: 'Unix seconds' },
        modified_at: { type: 'integer', description: 'Unix seconds' },
        cloud_region: { type: 'string' },
        created_by: { type: 'string', description: "The creator's e-mail" },
      },
    },
  };
}

function tokenResponseSchema(): Json {
  return {
    type: 'object',
    additionalProperties: false,
    required: [
      'access_token',
      'token_type',
      'expires_in',
      'user_email',
      'user_id',
      'tenant_id',
      'tenant_name',
      'tenant_type',
      'scope',
    ],
    properties: {
      access_token: { type: 'string', description: 'A JWT (`typ: at+jwt`)' },
      token_type: { const: 'Bearer' },
      expires_in: { type: 'integer', minimum: 1, description: 'seconds' },
      user_email: { type: 'string' },
      user_id: { type: 'string' },
      tenant_id: { type: 'string' },
      tenant_name: { type: 'string' },
      tenant_type: ref('TenantType'),
      scope: {
        type: 'string',
        description:
          "The granted scopes, space-separated and sorted: those of the member's role (`authorization.roles`); empty: none",
      },
      refresh_token: {
        type: 'string',
        description:
          'With `tokens.refresh.enabled`: the first refresh token of a new family (`tgr_…`), for `POST /1/oauth/token` `grant_type=refresh_token`.',
      },
    },
  };
}

function userSchemas(): Json {
  return {
    SignupRequest: {
      type: 'object',
      additionalProperties: false,
      required: ['email', 'password'],
      properties: {
        email: { type: 'string' },
        password: {
          type: 'string',
          description: '8 to 72 bytes of UTF-8, no control characters',
        },
        name: { type: 'string', maxLength: 200 },
      },
    },
    SignupResponse: {
      type: 'object',
      additionalProperties: false,
      required: ['user_id', 'user_email', 'tenant_id'],
      properties: {
        user_id: { type: 'string' },
        user_email: { type: 'string' },
        tenant_id: { type: 'string', description: 'The new personal tenant' },
      },
    },
    PasswordChange: {
      type: 'object',
      additionalProperties: false,
      required: ['password'],
      properties: { password: { type: 'string' } },
    },
  };
}

function jwkSetSchema(): Json {
  return {
    type: 'object',
    required: ['keys'],
    properties: {
      keys: {
        type: 'array',
        items: {
          type: 'object',
          required: ['kty', 'kid', 'alg', 'use'],
          properties: {
            kty: { enum: ['OKP', 'EC'] },
            kid: { type: 'string' },
            alg: { enum: ['EdDSA', 'ES256'] },
            use: { const: 'sig' },
          },
          not: { anyOf: [{ required: ['d'] }] },
        },
      },
    },
  };
}

/** The client-credentials token response (RFC 6749 §5.1, plus the tenant). */
function clientTokenResponseSchema(): Json {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['access_token', 'token_type', 'expires_in', 'scope', 'tenant_id'],
    properties: {
      access_token: { type: 'string', description: 'An RFC 9068 JWT.' },
      token_type: { const: 'Bearer' },
      expires_in: { type: 'integer', minimum: 1 },
      scope: { type: 'string', description: 'The scopes granted, space-separated.' },
      tenant_id: { type: 'string' },
    },
  };
}

/** The refresh-token grant's answer (RFC 6749 §5.1, plus the tenant): the successor refresh token with it. */
function refreshTokenResponseSchema(): Json {
  const client = clientTokenResponseSchema() as { required: string[]; properties: object };
  return {
    type: 'object',
    additionalProperties: false,
    required: [...client.required, 'refresh_token'],
    properties: {
      ...client.properties,
      scope: {
        type: 'string',
        description:
          'The scopes granted at login that the member’s role still grants (the live config), or the part of them the request asked for.',
      },
      refresh_token: {
        type: 'string',
        description: 'The successor (`tgr_…`); the one presented is used up.',
      },
    },
  };
}

/** The token exchange's answer (RFC 8693 §2.2.1, plus the tenant). */
function tokenExchangeResponseSchema(): Json {
  const client = clientTokenResponseSchema() as { required: string[]; properties: object };
  return {
    type: 'object',
    additionalProperties: false,
    required: [...client.required, 'issued_token_type'],
    properties: {
      ...client.properties,
      issued_token_type: { const: 'urn:ietf:params:oauth:token-type:access_token' },
      scope: {
        type: 'string',
        description: "The scopes of the member's role (`authorization.roles`), space-separated.",
      },
      refresh_token: {
        type: 'string',
        description:
          'With `tokens.refresh.enabled`: the first refresh token (`tgr_…`) of a new refresh family, as a Basic login gets.',
      },
    },
  };
}

/** RFC 8414 authorization server metadata, as the gateway fills it. */
function authorizationServerMetadataSchema(): Json {
  const uri = { type: 'string', format: 'uri' };
  const strings = { type: 'array', items: { type: 'string' } };
  return {
    type: 'object',
    required: [
      'issuer',
      'token_endpoint',
      'jwks_uri',
      'grant_types_supported',
      'token_endpoint_auth_methods_supported',
      'response_types_supported',
    ],
    properties: {
      issuer: { type: 'string', description: '`tokens.issuer`.' },
      token_endpoint: uri,
      jwks_uri: uri,
      grant_types_supported: strings,
      token_endpoint_auth_methods_supported: strings,
      response_types_supported: strings,
      scopes_supported: strings,
      revocation_endpoint: { ...uri, description: '`POST /1/oauth/revoke` (RFC 7009).' },
      revocation_endpoint_auth_methods_supported: strings,
      code_challenge_methods_supported: {
        ...strings,
        description: 'PKCE methods (RFC 7636): `S256` only.',
      },
    },
  };
}
