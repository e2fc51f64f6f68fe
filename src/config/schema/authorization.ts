/**
 * What members' roles and machine clients may hold (`authorization`), the
 * scope names every section shares ({@link scopeName}), and API keys
 * (`apiKeys`), as DESIGN §3 shows them. `authorization` is a key of the
 * configuration, applied live on reload (`ON_RELOAD` in gateway/reload.ts):
 * tokens issued after it carry the new scopes. `apiKeys` takes a restart
 * (the request path is built with or without keys).
 *
 * Defaults: every role maps to no scopes, so a config without `authorization`
 * behaves as before scopes existed — tokens carry an empty `scope`, and a
 * route without `scopes` asks for none.
 */
import { z } from 'zod';
import { foldHeaderName } from '../../header-names.js';
import { boolean, headerName } from './values.js';

/** An OAuth scope token (RFC 6749 §3.3): printable ASCII but space, `"` and `\`. */
export const SCOPE_PATTERN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/** A scope name, as config writes it (`catalog:read`). */
export const scopeName = z
  .string()
  .regex(
    SCOPE_PATTERN,
    'must be an OAuth scope: printable ASCII without spaces, quotes or backslashes',
  )
  .meta({ typeName: 'scope' });

/** The `authorization` section. */
export const authorization = z
  .strictObject({
    roles: z
      .strictObject({
        admin: z
          .array(scopeName)
          .default([])
          .describe("scopes of a tenant's admins: also the most a client an admin makes may hold"),
        member: z.array(scopeName).default([]).describe("scopes of a tenant's other members"),
      })
      .prefault({})
      .describe('the scopes each membership role (`member add --role`) maps to'),
    clientScopes: z
      .array(scopeName)
      .optional()
      .describe(
        "the scopes a machine client may hold: `client add --scopes` and the admins' API refuse any other; omitted: any scope (an admin still gives only their role's)",
      ),
  })
  .meta({
    description:
      "Roles and scopes: what members and machine clients may be given. A user token carries its role's scopes (`scope`, and `X-Scope` upstream); tokens issued after a reload carry the new ones. With `clientScopes`, every scope a route requires (`routes[].scopes`) must be some role's or a client's, else the config is refused.",
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
        "accept machine clients' API keys (`client key add`) on routes and `/auth/verify`, as `Authorization: Bearer tgk_…` or in `header`; off: a key is refused like any bad bearer token, and `header` is not read",
      ),
    header: headerName
      .default('X-API-Key')
      .describe(
        'the request header an API key may come in, besides `Authorization: Bearer`; stripped before forwarding while keys are on',
      ),
  })
  .meta({
    description:
      "Machine clients' API keys (`tgk_…`, see [Security](security.md#machine-client-secrets)).",
    examples: [{ enabled: true, header: 'X-API-Key' }],
  })
  .prefault({});

/** Header names an API key may not come in: the gateway reads or sets them for other ends. */
const RESERVED_FOR_KEYS = new Set([
  'authorization',
  'host',
  'cookie',
  'connection',
  'x-request-id',
]);

/**
 * `apiKeys.header` must be no identity header (the gateway sets those) and
 * none the gateway reads for another end.
 */
export function checkApiKeyHeader(config: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const header = (config['apiKeys'] as { header?: unknown } | undefined)?.header;
  if (typeof header !== 'string') return;
  const folded = foldHeaderName(header);
  const identity = Object.values((config['identityHeaders'] as object | undefined) ?? {});
  const clash =
    RESERVED_FOR_KEYS.has(folded) ||
    identity.some((name) => typeof name === 'string' && foldHeaderName(name) === folded);
  if (clash) {
    ctx.addIssue({
      code: 'custom',
      path: ['apiKeys', 'header'],
      message: `${header} is a header the gateway sets or reads for another purpose: name another`,
    });
  }
}
