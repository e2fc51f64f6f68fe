/**
 * The identity side of the gateway: the access tokens it issues and verifies,
 * how a revocation reaches the other instances, password hashing, signup, and
 * the seed file of users and tenants.
 */
import { z } from 'zod';
import { boolean, integer } from './values.js';

const algorithm = z.enum(['EdDSA', 'ES256']);

/**
 * `tokens.refresh`: refresh tokens (docs/identity-api.md#refresh-tokens). Off
 * by default: a refresh token is a credential that outlives a password's
 * presence on the client, so an operator turns it on knowing its lifetimes.
 */
const refresh = z
  .strictObject({
    enabled: boolean()
      .default(false)
      .describe(
        'the Basic token endpoint also returns a `refresh_token`, and `POST /1/oauth/token` takes `grant_type=refresh_token` (rotation, reuse detection) and `POST /1/oauth/revoke` ends a token and its family',
      ),
    ttlSeconds: integer(300, 31_536_000)
      .default(1_209_600)
      .describe(
        'idle lifetime: a refresh token not used within this ends (each rotation starts it again); at most `absoluteTtlSeconds`',
      ),
    absoluteTtlSeconds: integer(300, 31_536_000)
      .default(7_776_000)
      .describe(
        'lifetime of a family (a login and every refresh token rotated from it), however often it is rotated; then the user logs in again',
      ),
  })
  .refine((r) => r.ttlSeconds <= r.absoluteTtlSeconds, {
    message: 'ttlSeconds must not exceed absoluteTtlSeconds',
    path: ['ttlSeconds'],
  })
  .meta({
    description: 'Refresh tokens: rotated at each use, a reused one ends its whole family.',
    examples: [{ enabled: true, ttlSeconds: 1_209_600, absoluteTtlSeconds: 7_776_000 }],
  })
  .prefault({});

/** The `tokens` section. */
export const tokens = z
  .strictObject({
    issuer: z
      .string()
      .min(1)
      .default('tenant-gateway')
      .describe('`iss` of issued tokens; required on verify'),
    audience: z.string().min(1).default('tenant-api').describe('`aud`; required on verify'),
    ttlSeconds: integer(60, 86_400).default(3600).describe('token lifetime'),
    keys: z
      .string()
      .min(1)
      .optional()
      .describe(
        'directory of PEM private keys shared by all instances (relative to the config file); omitted: an ephemeral key (warned)',
      ),
    algorithms: z
      .array(algorithm)
      .min(1, 'must name at least one algorithm')
      .default(['EdDSA', 'ES256'])
      .describe('algorithms accepted on verify'),
    clockSkewSeconds: integer(0, 300).default(30).describe('tolerance on `exp`/`nbf`/`iat`'),
    refresh,
  })
  .meta({
    description: 'The access tokens the gateway issues and verifies.',
    examples: [{ issuer: 'https://auth.example.com', audience: 'orders-api', keys: './keys' }],
  })
  .prefault({});

/**
 * Lease mode is what makes "after the 204, no instance accepts the token"
 * hold across hosts; it costs a revocation its confirmation round trip and
 * each instance a few store commands a second, never one per request.
 */
export const revocation = z
  .strictObject({
    mode: z
      .enum(['lease', 'plain'])
      .default('lease')
      .describe(
        '`lease`: a logout, password change, disabled user or removed membership is answered only once every instance holding a lease has applied it, or its lease has run out (strict across hosts, see [Security](security.md#revocation-across-hosts)); `plain`: answered once the change is stored and published (strict on one host; another host may accept the old token for its own delay to the store). A store shared by several processes only: the embedded store is one process',
      ),
    leaseMs: integer(200, 60_000)
      .default(2000)
      .describe(
        "length of an instance's lease, renewed four times per length: an instance cut off from the store stops trusting its session cache within this; a revocation waits at most 1.5 times this for an instance that does not answer",
      ),
  })
  .meta({
    description: 'How a revocation reaches the other instances (a Redis store).',
    examples: [{ mode: 'lease', leaseMs: 1000 }],
  })
  .prefault({});

/** The `signup` section. */
export const signup = z
  .strictObject({
    enabled: boolean().default(false).describe('allow `POST /1/users`'),
    verifyEmail: boolean()
      .optional()
      .describe(
        'a new user proves their address by a mailed link (`/1/email-verifications/{token}`) before their password signs in (403 `email_not_verified`); omitted: on when `mail` is set. Needs `mail`',
      ),
    cloudRegion: z
      .string()
      .min(1)
      .default('local')
      .describe(
        '`cloud_region` of the personal tenants created with new users (signup, seed, CLI)',
      ),
  })
  .meta({
    description: 'Self-service signup.',
    examples: [{ enabled: true, cloudRegion: 'eu-west-1' }],
  })
  .prefault({});

/** The `passwords` section. */
export const passwords = z
  .strictObject({
    bcryptCost: integer(4, 15).default(10).describe('bcrypt cost for new hashes'),
    workers: integer(1, 256)
      .optional()
      .describe(
        'bcrypt worker threads; omitted: one less than the cores (at least one), so the event loop keeps a core',
      ),
  })
  .meta({
    description: 'Password hashing.',
    examples: [{ bcryptCost: 12, workers: 2 }],
  })
  .prefault({});

/** The `seed` key: a file of users and tenants upserted at start (`auth/seed.ts`). */
export const seed = z
  .string()
  .min(1)
  .optional()
  .meta({
    description: 'A seed file (users, tenants) upserted at start, relative to the config file.',
    examples: ['./seed.yaml'],
  });
