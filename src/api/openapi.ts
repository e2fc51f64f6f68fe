/**
 * The OpenAPI 3.1 description of what the gateway answers itself: the
 * identity API, the JWKS, this document and forward-auth's `/auth/verify`.
 * Served at `/.well-known/openapi.json` and written to `docs/openapi.json` by
 * `npm run docs`. Every status listed is one the gateway gives for that
 * operation; `test/api/openapi.redis.test.ts` drives each of them against a
 * running gateway, validates every answer against the schemas below, and
 * fails on any status that is not listed.
 */
import { ERROR_CODES } from '../errors.js';
import { VERSION } from '../version.js';

type Json = Record<string, unknown>;

const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Json): Json => ({ 'application/json': { schema } });

/** An error answer whose `error` is one of `codes`. */
function refusal(description: string, ...codes: string[]): Json {
  return {
    description,
    headers: { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } },
    content: json({
      allOf: [ref('Error'), { properties: { error: { enum: codes } } }],
    }),
  };
}

const BAD_INPUT = refusal('Malformed input (details in `error_description`).', 'invalid_request');
const STORE_DOWN = refusal('The store is unreachable: nobody is let in on a guess.', 'unavailable');
const BUG = refusal(
  'A bug or a corrupt record, logged with the request id; never described.',
  'internal_error',
);
const BASIC_REFUSED = refusal(
  'Basic credentials missing, malformed or wrong, or the account disabled (one answer for all).',
  'invalid_credentials',
);
const BEARER_REFUSED = refusal(
  'The bearer token is missing, malformed, expired, revoked or its session ended.',
  'invalid_token',
);
const THROTTLED = refusal('Too many login attempts: see `Retry-After`.', 'too_many_requests');
const TOO_LARGE = refusal('The body is larger than `limits.bodyBytes`.', 'payload_too_large');

const userIdParameter = {
  name: 'user_id',
  in: 'path',
  required: true,
  description: "The caller's own user id, or `current`.",
  schema: { type: 'string' },
};

const tokenOperation = (operationId: string, summary: string): Json => ({
  operationId,
  summary,
  tags: ['identity'],
  security: [{ basic: [] }],
  parameters: [
    {
      name: 'tenant_id',
      in: 'query',
      required: true,
      description: 'The tenant the token is for; exactly once.',
      schema: { type: 'string' },
    },
  ],
  responses: {
    '200': {
      description: 'A bearer token for the user in that tenant.',
      headers: { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } },
      content: json(ref('TokenResponse')),
    },
    '400': BAD_INPUT,
    '401': BASIC_REFUSED,
    '403': refusal(
      'The user is not a member of that tenant, or it does not exist (one answer for both).',
      'tenant_access_denied',
    ),
    '429': THROTTLED,
    '500': BUG,
    '503': STORE_DOWN,
  },
});

/** Forward-auth: every method is judged alike. */
const verifyOperation = (method: string): Json => ({
  operationId: `verify${method}`,
  summary: `Forward-auth verdict for a ${method.toUpperCase()} request (any method is judged alike)`,
  tags: ['forward-auth'],
  security: [{ bearer: [] }],
  responses: {
    '200': {
      description: 'Let it pass: the identity headers to copy onto the proxied request.',
      headers: {
        'X-Tenant-Id': { schema: { type: 'string' } },
        'X-Tenant-Type': { schema: { type: 'string', enum: ['usertenant', 'orgtenant'] } },
        'X-User-Id': { schema: { type: 'string' } },
        'X-User-Email': { schema: { type: 'string' } },
      },
    },
    '400': BAD_INPUT,
    '401': BEARER_REFUSED,
    '403': refusal(
      "The original request names another tenant than the token's, or the route excludes its tenant type.",
      'tenant_mismatch',
      'forbidden',
    ),
    '503': STORE_DOWN,
  },
});

export function openApiDocument(): Json {
  return {
    openapi: '3.1.0',
    info: {
      title: 'tenant-gateway',
      version: VERSION,
      summary: 'The identity API and forward-auth endpoint of tenant-gateway.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    tags: [
      { name: 'identity', description: 'Users, tenants and tokens (docs/identity-api.md).' },
      { name: 'keys', description: 'What verifies the tokens.' },
      { name: 'forward-auth', description: 'The verdict for an ingress (docs/forward-auth.md).' },
    ],
    paths: {
      '/1/users/{user_id}/tenants': {
        get: {
          operationId: 'listUserTenants',
          summary: 'The tenants the user belongs to, sorted by tenant_id',
          tags: ['identity'],
          security: [{ basic: [] }],
          parameters: [userIdParameter],
          responses: {
            '200': {
              description: "The user's tenants.",
              headers: { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } },
              content: json(ref('TenantList')),
            },
            '401': BASIC_REFUSED,
            '403': refusal('The path names another user.', 'forbidden'),
            '429': THROTTLED,
            '500': BUG,
            '503': STORE_DOWN,
          },
        },
      },
      '/1/token': {
        get: tokenOperation('issueToken', 'A bearer token for one of the user’s tenants'),
        delete: {
          operationId: 'revokeToken',
          summary: 'Log out: this token stops working at once, on every instance',
          tags: ['identity'],
          security: [{ bearer: [] }],
          responses: {
            '204': { description: 'Revoked.' },
            '401': BEARER_REFUSED,
            '503': STORE_DOWN,
          },
        },
      },
      '/1/oauth/token': {
        get: tokenOperation('issueTokenOAuth', 'The same as GET /1/token'),
      },
      '/1/tenants/{tenant_id}': {
        get: {
          operationId: 'getTenant',
          summary: "The token's tenant record",
          tags: ['identity'],
          security: [{ bearer: [] }],
          parameters: [
            {
              name: 'tenant_id',
              in: 'path',
              required: true,
              description: "The token's tenant id, or `current`.",
              schema: { type: 'string' },
            },
          ],
          responses: {
            '200': {
              description: 'The tenant record.',
              headers: { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } },
              content: json(ref('Tenant')),
            },
            '401': BEARER_REFUSED,
            '403': refusal("The path names another tenant than the token's.", 'tenant_mismatch'),
            '404': refusal('The tenant was removed after the token was issued.', 'not_found'),
            '500': BUG,
            '503': STORE_DOWN,
          },
        },
      },
      '/1/users': {
        post: {
          operationId: 'signUp',
          summary: 'Sign up (when `signup.enabled`): a user and their personal tenant',
          tags: ['identity'],
          security: [],
          requestBody: { required: true, content: json(ref('SignupRequest')) },
          responses: {
            '201': {
              description: 'The new user and personal tenant.',
              headers: { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } },
              content: json(ref('SignupResponse')),
            },
            '400': BAD_INPUT,
            '403': refusal('Signup is disabled.', 'forbidden'),
            '409': refusal('The e-mail is registered already (any letter case).', 'user_exists'),
            '413': TOO_LARGE,
            '429': refusal(
              'Too many signups from this address: see `Retry-After`.',
              'too_many_requests',
            ),
            '503': STORE_DOWN,
          },
        },
      },
      '/1/users/{user_id}/password': {
        put: {
          operationId: 'changePassword',
          summary: 'Change the password: every token of the user stops working at once',
          tags: ['identity'],
          security: [{ basic: [] }],
          parameters: [userIdParameter],
          requestBody: { required: true, content: json(ref('PasswordChange')) },
          responses: {
            '204': { description: 'Changed; every session of the user has ended.' },
            '400': BAD_INPUT,
            '401': BASIC_REFUSED,
            '403': refusal('The path names another user.', 'forbidden'),
            '413': TOO_LARGE,
            '429': THROTTLED,
            '503': STORE_DOWN,
          },
        },
      },
      '/.well-known/jwks.json': {
        get: {
          operationId: 'getJwks',
          summary: 'The public keys that verify the tokens (RFC 7517)',
          tags: ['keys'],
          security: [],
          responses: {
            '200': {
              description: 'The JWK Set; cache for up to 300 s.',
              content: { 'application/jwk-set+json': { schema: ref('JwkSet') } },
            },
          },
        },
      },
      '/.well-known/openapi.json': {
        get: {
          operationId: 'getOpenApi',
          summary: 'This document',
          tags: ['keys'],
          security: [],
          responses: {
            '200': {
              description: 'The OpenAPI 3.1 document.',
              content: json({ type: 'object', required: ['openapi', 'paths'] }),
            },
          },
        },
      },
      '/auth/verify': {
        get: verifyOperation('get'),
        post: verifyOperation('post'),
        put: verifyOperation('put'),
        patch: verifyOperation('patch'),
        delete: verifyOperation('delete'),
      },
    },
    components: {
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
        Error: {
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
        },
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
        TokenResponse: {
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
          },
        },
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
        JwkSet: {
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
        },
      },
    },
  };
}
