/**
 * Tenants' own identity providers (`sso`, issue 34): sign-in through a
 * tenant's IdP and the key that seals the IdP client secrets at rest. The
 * IdP records themselves are data (`tenant idp set`, `PUT
 * /1/tenants/{tenant_id}/idp`), not configuration.
 */
import { z } from 'zod';
import { boolean, httpUrl } from './values.js';

/** A registered redirect URI: an absolute http(s) URL without a fragment (RFC 6749 §3.1.2). */
const redirectUri = httpUrl.refine(
  (value) => !value.includes('#'),
  'must not have a fragment (RFC 6749 §3.1.2)',
);

/** The `sso` section. */
export const sso = z
  .strictObject({
    enabled: boolean()
      .default(false)
      .describe(
        "sign-in through tenants' identity providers: token exchange at `/1/oauth/token` and browser sign-in at `/1/tenants/{tenant_id}/sso/login`. Tenants' IdP records can be set whether or not it is on",
      ),
    redirectUris: z
      .array(redirectUri)
      .default([])
      .describe(
        "where a browser sign-in may hand its one-time code back, compared exactly: an application's `redirect_uri` must be one of these",
      ),
    secretsKeyFile: z
      .string()
      .min(1)
      .optional()
      .describe(
        'file of 32 random bytes in base64 (`openssl rand -base64 32`), relative to the config file: the key that seals IdP client secrets in the store (AES-256-GCM). Every instance and the CLI must read the same file. Required to set an IdP with a client secret; omitted: such a set is refused',
      ),
  })
  .meta({
    description: "Tenants' own identity providers (OIDC sign-in).",
    examples: [
      {
        enabled: true,
        redirectUris: ['https://app.example.com/signed-in'],
        secretsKeyFile: './sso-secrets.key',
      },
    ],
  })
  .prefault({});
