/** OpenAPI operations of forward-auth: `/auth/verify`, every method judged alike. */
import { BAD_INPUT, BEARER_REFUSED, type Json, refusal, STORE_DOWN } from './answers.js';

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
        Authorization: {
          description:
            "The request's Authorization as sent, absent when it carries an API key or a key admitted the request: the ingress copies it (and the API-key header, never answered) onto the proxied request, so a key never reaches the service.",
          schema: { type: 'string' },
        },
      },
    },
    '400': BAD_INPUT,
    '401': BEARER_REFUSED,
    '403': refusal(
      'The original request names another tenant than the token\'s, the route excludes its tenant type, or the token lacks a scope the route requires for the original method (`WWW-Authenticate: Bearer error="insufficient_scope"`).',
      'tenant_mismatch',
      'forbidden',
      'insufficient_scope',
    ),
    '503': STORE_DOWN,
  },
});

/** `/auth/verify` */
export function verifyPath(): Json {
  return {
    get: verifyOperation('get'),
    post: verifyOperation('post'),
    put: verifyOperation('put'),
    patch: verifyOperation('patch'),
    delete: verifyOperation('delete'),
  };
}
