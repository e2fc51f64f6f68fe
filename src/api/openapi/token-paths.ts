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
  return { get: tokenOperation('issueTokenOAuth', 'The same as GET /1/token') };
}
