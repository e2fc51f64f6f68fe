/**
 * What members' roles and machine clients may hold (`authorization`), and
 * API keys (`apiKeys`), as DESIGN §3 shows them. Not yet keys of the
 * configuration: they join `configSchema` (`../schema.ts`) together with
 * their reload rule (`ON_RELOAD` in gateway.ts, `restart`); until then the
 * CLI checks a client's scopes against {@link SCOPE_PATTERN} only.
 */
import { z } from 'zod';
import { boolean, headerName } from './values.js';

/** An OAuth scope token (RFC 6749 §3.3): printable ASCII but space, `"` and `\`. */
export const SCOPE_PATTERN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

const scope = z
  .string()
  .regex(
    SCOPE_PATTERN,
    'must be an OAuth scope: printable ASCII without spaces, quotes or backslashes',
  );

/** The `authorization` section. */
export const authorization = z
  .strictObject({
    roles: z
      .strictObject({
        admin: z.array(scope).default([]).describe("scopes of a tenant's admins"),
        member: z.array(scope).default([]).describe("scopes of a tenant's other members"),
      })
      .prefault({})
      .describe('the scopes each membership role (`member add --role`) maps to'),
    clientScopes: z
      .array(scope)
      .optional()
      .describe(
        'the scopes a machine client may hold: `client add --scopes` refuses any other; omitted: any scope',
      ),
  })
  .meta({
    description: 'Roles and scopes: what members and machine clients may be given.',
    examples: [
      {
        roles: {
          admin: ['catalog:read', 'catalog:write', 'clients:manage'],
          member: ['catalog:read'],
        },
        clientScopes: ['catalog:read', 'catalog:write'],
      },
    ],
  })
  .prefault({});

/** The `apiKeys` section. */
export const apiKeys = z
  .strictObject({
    enabled: boolean()
      .default(false)
      .describe(
        'whether API keys (`client key add`) are to be accepted as credentials. Not read yet: this version stores keys, the request path does not take them',
      ),
    header: headerName
      .default('X-API-Key')
      .describe('the request header an API key may come in, besides `Authorization: Bearer`'),
  })
  .meta({
    description:
      "Machine clients' API keys (`tgk_…`, see [Security](security.md#machine-client-secrets)).",
    examples: [{ enabled: true, header: 'X-API-Key' }],
  })
  .prefault({});
