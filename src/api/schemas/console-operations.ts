/**
 * The operations a browser front end (the console, issue 46) needs besides
 * the others: who the caller is, moving the session to another of the user's
 * tenants, and a tenant's audit events for its admins.
 */
import { adminOperation, NO_STORE, TENANT_GONE } from './admin-operation.js';
import { AuditEventPage, AuditQuery } from './audit.js';
import { CurrentUser, SessionTenant } from './current-user.js';
import { answer, refusal, SESSION_OR_BEARER, type Operation } from './operation.js';
import { BAD_INPUT, STORE_DOWN, tenantIdParam, TOO_LARGE } from './refusals.js';

const CALLER_REFUSED = refusal(
  'No bearer token and no session cookie; either one malformed, unknown, expired or ended; or the cookie sent twice.',
  'invalid_token',
);

export const getCurrentUser: Operation = {
  method: 'get',
  path: '/1/users/current',
  operationId: 'getCurrentUser',
  summary: 'The caller: their user, the tenant and role of their session or token, their tenants',
  tags: ['identity'],
  security: SESSION_OR_BEARER,
  answers: { 200: answer('The caller, read from the store now.', CurrentUser, NO_STORE) },
  refusals: {
    401: CALLER_REFUSED,
    403: refusal('A machine client is no user.', 'forbidden'),
    503: STORE_DOWN,
  },
};

export const switchSessionTenant: Operation = {
  method: 'post',
  path: '/1/sessions',
  operationId: 'switchSessionTenant',
  summary: "A new browser session for another of the user's tenants; the caller's session ends",
  description:
    "Session cookie only, from the gateway's own origin. The new session's cookie is in `Set-Cookie`; the old session ends on every instance (`session_ended` reason `tenant_switched`).",
  tags: ['identity'],
  security: [{ session: [] }],
  body: { schema: SessionTenant, required: true },
  answers: {
    204: {
      description: 'The new session began: its cookie is set.',
      headers: { 'Set-Cookie': { schema: { type: 'string' } } },
    },
  },
  refusals: {
    400: BAD_INPUT,
    401: CALLER_REFUSED,
    403: refusal(
      "A bearer token names its tenant: ask for a token of the other tenant (`forbidden`); not from the gateway's own origin (`csrf_refused`); the tenant does not exist or the user is not its member (`tenant_access_denied`).",
      'forbidden',
      'csrf_refused',
      'tenant_access_denied',
    ),
    413: TOO_LARGE,
    503: STORE_DOWN,
  },
};

export const listTenantAudit = adminOperation({
  method: 'get',
  path: '/1/tenants/{tenant_id}/audit',
  operationId: 'listTenantAudit',
  summary: "The tenant's audit events, newest first, filtered and paged",
  tags: ['identity'],
  params: tenantIdParam,
  query: AuditQuery,
  answers: { 200: answer("A page of the tenant's events.", AuditEventPage, NO_STORE) },
  refusals: { 400: BAD_INPUT },
  notFound: TENANT_GONE,
});
