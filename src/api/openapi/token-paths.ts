/** OpenAPI operations on tokens: issuing one (two paths alike) and logging out. */
import {
  BAD_INPUT,
  BASIC_REFUSED,
  BEARER_REFUSED,
  BUG,
  type Json,
  json,
  ref,
  refusal,
  REQUEST_ID_HEADER,
  STORE_DOWN,
  THROTTLED,
} from './answers.js';

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
      headers: REQUEST_ID_HEADER,
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

/** `/1/token` */
export function tokenPath(): Json {
  return {
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
  };
}

/** `/1/oauth/token` */
export function oauthTokenPath(): Json {
  return {
    get: tokenOperation('issueTokenOAuth', 'The same as GET /1/token'),
    post: clientCredentialsOperation(),
  };
}

/** `POST /1/oauth/token`: the client-credentials grant of machine clients (RFC 6749 §4.4). */
function clientCredentialsOperation(): Json {
  return {
    operationId: 'clientCredentialsToken',
    summary: 'A bearer token for a machine client (OAuth client credentials)',
    description:
      'Client authentication by HTTP Basic (`client_secret_basic`: id and secret each form-urlencoded, RFC 6749 §2.3.1) or in the body (`client_secret_post`), exactly one of the two. Never cached (`Cache-Control: no-store`, `Pragma: no-cache`).',
    tags: ['identity'],
    security: [{ basic: [] }, {}],
    requestBody: {
      required: true,
      content: {
        'application/x-www-form-urlencoded': {
          schema: {
            type: 'object',
            required: ['grant_type'],
            properties: {
              grant_type: { type: 'string', enum: ['client_credentials'] },
              scope: {
                type: 'string',
                description:
                  'Space-separated scopes, each one the client holds; omitted: every scope it holds.',
              },
              client_id: { type: 'string', description: '`client_secret_post` only.' },
              client_secret: { type: 'string', description: '`client_secret_post` only.' },
            },
          },
        },
      },
    },
    responses: {
      '200': {
        description: 'An access token for the client, in its tenant, with the scopes granted.',
        headers: REQUEST_ID_HEADER,
        content: json(ref('ClientTokenResponse')),
      },
      '400': refusal(
        'A body not form-encoded, a parameter missing or repeated, two authentication methods; a scope the client does not hold; a grant type other than client_credentials.',
        'invalid_request',
        'invalid_scope',
        'unsupported_grant_type',
      ),
      '401': refusal(
        'Unknown client, wrong secret or expired client (one answer for all), with `WWW-Authenticate: Basic realm="tenant-gateway"`.',
        'invalid_client',
      ),
      '429': THROTTLED,
      '503': STORE_DOWN,
    },
  };
}
