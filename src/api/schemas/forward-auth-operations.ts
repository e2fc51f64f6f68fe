/** The operations of forward-auth: `/auth/verify`, every method judged alike. */
import { BEARER, refusal, type Method, type Operation } from './operation.js';
import { BAD_INPUT, BEARER_REFUSED, STORE_DOWN } from './refusals.js';

const IDENTITY_HEADERS = {
  'X-Tenant-Id': { schema: { type: 'string' } },
  'X-Tenant-Type': { schema: { type: 'string', enum: ['usertenant', 'orgtenant'] } },
  'X-User-Id': { schema: { type: 'string' } },
  'X-User-Email': { schema: { type: 'string' } },
  Authorization: {
    description:
      "The request's Authorization as sent, absent when it carries an API key or a key admitted the request: the ingress copies it (and the API-key header, never answered) onto the proxied request, so a key never reaches the service.",
    schema: { type: 'string' },
  },
};

const verify = (method: Method): Operation => ({
  method,
  path: '/auth/verify',
  operationId: `verify${method}`,
  summary: `Forward-auth verdict for a ${method.toUpperCase()} request (any method is judged alike)`,
  tags: ['forward-auth'],
  security: BEARER,
  answers: {
    200: {
      description: 'Let it pass: the identity headers to copy onto the proxied request.',
      headers: IDENTITY_HEADERS,
    },
  },
  refusals: {
    400: BAD_INPUT,
    401: BEARER_REFUSED,
    403: refusal(
      'The original request names another tenant than the token\'s, the route excludes its tenant type, or the token lacks a scope the route requires for the original method (`WWW-Authenticate: Bearer error="insufficient_scope"`).',
      'tenant_mismatch',
      'forbidden',
      'insufficient_scope',
    ),
    503: STORE_DOWN,
  },
});

export const verifyOperations = (['get', 'post', 'put', 'patch', 'delete'] as const).map(verify);
