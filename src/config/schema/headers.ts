/**
 * The headers around a proxied request: whose `X-Forwarded-*` (and
 * `traceparent`) are believed, the identity headers the gateway sets from the
 * verified token, and the identity-like headers it strips from clients.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { foldHeaderName, headerNameMatcher, IDENTITY_LIKE_HEADERS } from '../../header-names.js';
import { headerName } from './values.js';

const cidr = z
  .string()
  .refine((value) => {
    const [address, bits, ...rest] = value.split('/');
    const family = isIP(address ?? '');
    if (family === 0 || rest.length > 0) return false;
    if (bits === undefined) return true;
    const n = Number(bits);
    return /^\d+$/.test(bits) && n >= 0 && n <= (family === 4 ? 32 : 128);
  }, 'must be an IP address or CIDR block (10.0.0.0/8, fd00::/8)')
  .meta({ typeName: 'IP address or CIDR block' });

/** The `trustedProxies` key. */
export const trustedProxies = z
  .array(cidr)
  .default([])
  .meta({
    description:
      'IP addresses or CIDR blocks whose `X-Forwarded-*` headers (and `traceparent`) are believed.',
    examples: [['10.0.0.0/8', 'fd00::/8']],
  });

/** The `identityHeaders` section. */
export const identityHeaders = z
  .strictObject({
    tenantId: headerName.default('X-Tenant-Id').describe("header carrying the token's tenant id"),
    tenantType: headerName
      .default('X-Tenant-Type')
      .describe("header carrying the token's tenant type (`orgtenant`, `usertenant`)"),
    userId: headerName.default('X-User-Id').describe("header carrying the token's user id"),
    userEmail: headerName
      .default('X-User-Email')
      .describe("header carrying the token's user e-mail"),
    // Issue 32: roles and scopes.
    scope: headerName
      .default('X-Scope')
      .describe("header carrying the token's granted scopes, space-separated and sorted"),
    clientId: headerName
      .default('X-Client-Id')
      .describe(
        "header carrying a machine client's id (client tokens only: they carry no user id or e-mail)",
      ),
  })
  // Reported with every other problem of the config, even when a name here is wrong.
  .superRefine(checkIdentityHeaders, { when: () => true })
  .meta({
    description:
      "Names of the headers the gateway sets on proxied requests (and forward-auth answers) from the verified token; a client's own values are stripped. The names must differ.",
    examples: [{ tenantId: 'X-Org-Id', userId: 'X-Subject' }],
  })
  .prefault({});

const strippedByDefault = headerNameMatcher(IDENTITY_LIKE_HEADERS);

/**
 * Identity-like headers stripped from proxied requests besides the identity
 * headers themselves: `add` strips more names, `keep`
 * lets names of the default list (`IDENTITY_LIKE_HEADERS` in
 * `header-names.ts`) through. Any spelling; a trailing `*` is a prefix.
 */
export const stripHeaders = z
  .strictObject({
    add: z
      .array(headerName)
      .default([])
      .describe(
        'extra header names to strip from clients (`X-Internal-*`: a trailing `*` is a prefix)',
      ),
    keep: z
      .array(
        headerName.refine(
          (name) => strippedByDefault(foldHeaderName(name)),
          'is not stripped by default, so there is nothing to keep',
        ),
      )
      .default([])
      .describe('names of the default identity-like list to let through'),
  })
  .meta({
    description:
      'Identity-like headers (`X-Forwarded-User`, `X-Auth-Request-*`, …) are stripped from proxied requests besides the identity headers themselves; this adjusts the list. Names in any spelling.',
    examples: [{ add: ['X-Internal-*'], keep: ['X-Remote-User'] }],
  })
  .prefault({});

/** The identity headers must differ, in any letter case. The value may be partly invalid. */
function checkIdentityHeaders(headers: unknown, ctx: z.RefinementCtx): void {
  if (headers === null || typeof headers !== 'object') return;
  const names = Object.values(headers)
    .filter((h): h is string => typeof h === 'string')
    .map((h) => h.toLowerCase());
  if (new Set(names).size !== names.length) {
    ctx.addIssue({ code: 'custom', path: [], message: 'names must differ' });
  }
}

/** `stripHeaders` omitted: nothing added, nothing kept; the header policy's default too. */
export const STRIP_HEADERS_DEFAULTS: {
  readonly add: readonly string[];
  readonly keep: readonly string[];
} = stripHeaders.parse(undefined);
