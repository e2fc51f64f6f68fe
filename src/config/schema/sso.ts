/**
 * Tenants' own identity providers (`sso`, issue 34): sign-in through a
 * tenant's IdP, the key that seals the IdP client secrets at rest, and how
 * the gateway reaches the providers (discovery and JWKS over HTTPS,
 * `auth/federation/`). The IdP records themselves are data (`tenant idp
 * set`, `PUT /1/tenants/{tenant_id}/idp`), not configuration.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { boolean, httpUrl, integer } from './values.js';

/** A DNS server as node:dns's `setServers` takes it: an IP address, with `:port` (an IPv6 one in brackets). */
const dnsServer = z.string().refine((value) => {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(value);
  const plain = /^([^:]+)(?::(\d{1,5}))?$/.exec(value);
  const [, host = '', port] = bracketed ?? plain ?? (isIP(value) === 6 ? [value, value] : []);
  return isIP(host) !== 0 && (port === undefined || (Number(port) > 0 && Number(port) < 65536));
}, 'must be an IP address, optionally with :port (an IPv6 one as [address]:port)');

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
    ca: z
      .string()
      .min(1)
      .optional()
      .describe(
        'PEM file of extra CA certificates trusted for identity providers (relative to the config file), beside the system ones: a private IdP',
      ),
    allowPrivateIssuers: boolean()
      .default(false)
      .describe(
        "let an issuer, and every URL its discovery document names, be on a loopback, private, link-local, CGNAT or other non-public address. Off: such an IdP is refused when it is set (400) and every connection to a provider goes only to public addresses, checked when the socket is made (DNS rebinding). Turn on only for an IdP on the operator's own network: tenant admins choose issuers",
      ),
    failureCacheSeconds: integer(0, 3600)
      .default(30)
      .describe(
        "a provider's discovery document or key set that could not be had (unreachable, refused, not a 200, not fitting) is not fetched again for this long: exchanges and sign-ins in the meantime get 503 without a request to the provider. `0`: not cached",
      ),
    timeoutMs: integer(100, 60_000)
      .default(5000)
      .describe("how long a provider's discovery document or key set may take to arrive"),
    keysMaxAgeSeconds: integer(60, 86_400)
      .default(600)
      .describe("a provider's discovery document and key set are fetched again once this old"),
    unknownKeyCooldownSeconds: integer(1, 3600)
      .default(30)
      .describe(
        "a token signed with a key the cached set lacks refetches the set at most once per this time per provider (the provider's key rotation; never more for made-up `kid`s)",
      ),
    dnsServers: z
      .array(dnsServer)
      .min(1)
      .optional()
      .describe(
        "the DNS servers asked for tenants' domain verification TXT records (`_tenant-gateway-challenge.<domain>`), as `address` or `address:port`; omitted: the system's resolvers",
      ),
    maxProviders: integer(1, 100_000)
      .default(1000)
      .describe(
        'providers whose discovery document and keys are cached at once (least recently used dropped)',
      ),
  })
  .meta({
    description: "Tenants' own identity providers (OIDC sign-in, token exchange).",
    examples: [
      {
        enabled: true,
        redirectUris: ['https://app.example.com/signed-in'],
        secretsKeyFile: './sso-secrets.key',
        ca: './idp-ca.pem',
      },
    ],
  })
  .prefault({});
