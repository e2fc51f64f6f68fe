/** The operations on tenants: the user's tenants and the token's tenant record. */
import { answer, BASIC, BEARER, refusal, type Operation } from './operation.js';
import {
  BASIC_REFUSED,
  BEARER_REFUSED,
  BUG,
  STORE_DOWN,
  tenantIdParam,
  THROTTLED,
  userIdParam,
} from './refusals.js';
import { Tenant, TenantList } from './tenants.js';

export const listUserTenants: Operation = {
  method: 'get',
  path: '/1/users/{user_id}/tenants',
  operationId: 'listUserTenants',
  summary: 'The tenants the user belongs to, sorted by tenant_id',
  tags: ['identity'],
  security: BASIC,
  params: userIdParam,
  answers: { 200: answer("The user's tenants.", TenantList) },
  refusals: {
    401: BASIC_REFUSED,
    403: refusal('The path names another user.', 'forbidden'),
    429: THROTTLED,
    500: BUG,
    503: STORE_DOWN,
  },
};

export const getTenant: Operation = {
  method: 'get',
  path: '/1/tenants/{tenant_id}',
  operationId: 'getTenant',
  summary: "The token's tenant record",
  tags: ['identity'],
  security: BEARER,
  params: tenantIdParam,
  answers: { 200: answer('The tenant record.', Tenant) },
  refusals: {
    401: BEARER_REFUSED,
    403: refusal("The path names another tenant than the token's.", 'tenant_mismatch'),
    404: refusal('The tenant was removed after the token was issued.', 'not_found'),
    500: BUG,
    503: STORE_DOWN,
  },
};
