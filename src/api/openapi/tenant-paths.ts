/** OpenAPI operations on tenants: the user's tenants and the token's tenant record. */
import {
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
  userIdParameter,
} from './answers.js';

/** `/1/users/{user_id}/tenants` */
export function userTenantsPath(): Json {
  return {
    get: {
      operationId: 'listUserTenants',
      summary: 'The tenants the user belongs to, sorted by tenant_id',
      tags: ['identity'],
      security: [{ basic: [] }],
      parameters: [userIdParameter],
      responses: {
        '200': {
          description: "The user's tenants.",
          headers: REQUEST_ID_HEADER,
          content: json(ref('TenantList')),
        },
        '401': BASIC_REFUSED,
        '403': refusal('The path names another user.', 'forbidden'),
        '429': THROTTLED,
        '500': BUG,
        '503': STORE_DOWN,
      },
    },
  };
}

/** `/1/tenants/{tenant_id}` */
export function tenantPath(): Json {
  return {
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
          headers: REQUEST_ID_HEADER,
          content: json(ref('Tenant')),
        },
        '401': BEARER_REFUSED,
        '403': refusal("The path names another tenant than the token's.", 'tenant_mismatch'),
        '404': refusal('The tenant was removed after the token was issued.', 'not_found'),
        '500': BUG,
        '503': STORE_DOWN,
      },
    },
  };
}
