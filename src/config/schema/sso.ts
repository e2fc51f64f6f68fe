/**
 * The `sso` section: tenants' own identity providers (issue 34). A tenant's
 * provider is a store record (`tenant idp set`, `PUT /1/tenants/{id}/idp`);
 * this section says whether the gateway accepts them at all and how it
 * reaches them (discovery and JWKS over HTTPS, `auth/federation/`).
 */
import { z } from 'zod';
import { boolean, integer } from './values.js';

export const sso = z
  .strictObject({
    enabled: boolean()
      .default(false)
      .describe(
        'accept tenants’ identity providers: the token exchange at `POST /1/oauth/token` (RFC 8693)',
      ),
    ca: z
      .string()
      .min(1)
      .optional()
      .describe(
        'PEM file of extra CA certificates trusted for identity providers (relative to the config file), beside the system ones: a private IdP',
      ),
    timeoutMs: integer(100, 60_000)
      .default(5000)
      .describe("how long a provider's discovery document or key set may take to arrive"),
    keysMaxAgeSeconds: integer(60, 86_400)
      .default(600)
      .describe("a provider's key set is fetched again once this old"),
    unknownKeyCooldownSeconds: integer(1, 3600)
      .default(30)
      .describe(
        "a token signed with a key the cached set lacks refetches the set at most once per this time per provider (the provider's key rotation; never more for made-up `kid`s)",
      ),
    maxProviders: integer(1, 100_000)
      .default(1000)
      .describe(
        'providers whose discovery document and keys are cached at once (least recently used dropped)',
      ),
  })
  .meta({
    description: "Tenants' own identity providers: the token exchange.",
    examples: [{ enabled: true, ca: './idp-ca.pem' }],
  })
  .prefault({});
