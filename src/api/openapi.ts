/**
 * The OpenAPI 3.1 description of what the gateway answers itself: the
 * identity API, the JWKS, this document and forward-auth's `/auth/verify`.
 * Served at `/.well-known/openapi.json` and written to `docs/openapi.json` by
 * `npm run docs`. Every status listed is one the gateway gives for that
 * operation; `test/api/openapi.redis.test.ts` drives each of them against a
 * running gateway, validates every answer against the schemas, and fails on
 * any status that is not listed.
 *
 * This file is the table of paths; each group's operations live in
 * `openapi/` (tenants, machine clients, identity providers, tokens, users, well-known,
 * forward-auth), the schemas
 * in `openapi/schemas.ts`.
 */
import { VERSION } from '../version.js';
import type { Json } from './openapi/answers.js';
import {
  clientKeyPath,
  clientKeysPath,
  clientPath,
  clientSecretPath,
  clientsPath,
} from './openapi/client-paths.js';
import { verifyPath } from './openapi/forward-auth-paths.js';
import { domainPath, domainsPath, domainVerifyPath } from './openapi/domain-paths.js';
import { idpPath } from './openapi/idp-paths.js';
import { ssoCallbackPath, ssoLoginPath } from './openapi/sso-paths.js';
import { components } from './openapi/schemas.js';
import { tenantPath, userTenantsPath } from './openapi/tenant-paths.js';
import { oauthRevokePath, oauthTokenPath, tokenPath } from './openapi/token-paths.js';
import { passwordPath, signupPath } from './openapi/user-paths.js';
import { jwksPath, oauthMetadataPath, openApiPath } from './openapi/well-known-paths.js';

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
      { name: 'keys', description: 'What verifies the tokens.' },
      { name: 'forward-auth', description: 'The verdict for an ingress (docs/forward-auth.md).' },
    ],
    // The order of the keys is the order of docs/openapi.json.
    paths: {
      '/1/users/{user_id}/tenants': userTenantsPath(),
      '/1/token': tokenPath(),
      '/1/oauth/token': oauthTokenPath(),
      '/1/oauth/revoke': oauthRevokePath(),
      '/1/tenants/{tenant_id}': tenantPath(),
      '/1/tenants/{tenant_id}/clients': clientsPath(),
      '/1/tenants/{tenant_id}/clients/{client_id}': clientPath(),
      '/1/tenants/{tenant_id}/clients/{client_id}/secret': clientSecretPath(),
      '/1/tenants/{tenant_id}/clients/{client_id}/keys': clientKeysPath(),
      '/1/tenants/{tenant_id}/clients/{client_id}/keys/{key_id}': clientKeyPath(),
      '/1/tenants/{tenant_id}/idp': idpPath(),
      '/1/tenants/{tenant_id}/domains': domainsPath(),
      '/1/tenants/{tenant_id}/domains/{domain}': domainPath(),
      '/1/tenants/{tenant_id}/domains/{domain}/verify': domainVerifyPath(),
      '/1/tenants/{tenant_id}/sso/login': ssoLoginPath(),
      '/1/sso/callback': ssoCallbackPath(),
      '/1/users': signupPath(),
      '/1/users/{user_id}/password': passwordPath(),
      '/.well-known/jwks.json': jwksPath(),
      '/.well-known/oauth-authorization-server': oauthMetadataPath(),
      '/.well-known/openapi.json': openApiPath(),
      '/auth/verify': verifyPath(),
    },
    components: components(),
  };
}
