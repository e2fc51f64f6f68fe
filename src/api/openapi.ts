/**
 * The OpenAPI 3.1 description of what the gateway answers itself: the
 * identity API, the JWKS, this document and forward-auth's `/auth/verify`.
 * Served at `/.well-known/openapi.json` and written to `docs/openapi.json` by
 * `npm run docs`.
 *
 * Generated: each operation is declared once in `schemas/*-operations.ts`
 * (the zod schemas its route validates with and its representations are
 * typed by); `openapi/` renders them, the shapes by `z.toJSONSchema`.
 * `test/api/openapi.redis.test.ts` drives every status against running
 * gateways; `test/api/openapi-answers.test.ts` holds real answers against
 * the document and against the zod schemas it came from.
 */
import { VERSION } from '../version.js';
import { components } from './openapi/components.js';
import { renderPaths } from './openapi/paths.js';
import type { Json } from './schemas/operation.js';
import { OPERATIONS } from './schemas/operations.js';

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
      {
        name: 'clients',
        description: "A tenant's machine clients and API keys, managed by its admins.",
      },
      {
        name: 'identity-providers',
        description: "A tenant's own identity provider (OIDC sign-in), managed by its admins.",
      },
      {
        name: 'members',
        description:
          "A tenant's members and invitations, managed by its admins (docs/accounts.md).",
      },
      { name: 'keys', description: 'What verifies the tokens.' },
      { name: 'forward-auth', description: 'The verdict for an ingress (docs/forward-auth.md).' },
    ],
    paths: renderPaths(OPERATIONS),
    components: components(),
  };
}
