/**
 * The limits: login, signup and browser sign-in throttling, the body cap of the gateway's own
 * endpoints, a cap on a whole request, the connections to each upstream and
 * each tenant's share of them, and the token buckets of `routes[].rateLimit`
 * with how instances sharing a store reconcile them.
 */
import { z } from 'zod';
import { decimal, integer } from './values.js';

/** The `limits` section. */
export const limits = z
  .strictObject({
    login: z
      .strictObject({
        perEmail: integer(1, 1_000_000)
          .default(10)
          .describe(
            "failed logins allowed per e-mail per window (a machine client's secret: per client id and IP, never per id alone; a refused passkey: per client IP only)",
          ),
        perIp: integer(1, 1_000_000)
          .default(100)
          .describe(
            "failed logins allowed per client IP per window (users' passwords, refused passkeys and machine clients' secrets alike)",
          ),
        windowSeconds: integer(1, 86_400)
          .default(900)
          .describe('the window of `perEmail` and `perIp`'),
        // The queue caps keep one client's flood from delaying every other login.
        maxQueuedPerEmail: integer(1, 10_000)
          .default(4)
          .describe(
            "logins of one e-mail waiting for or running on this instance's bcrypt pool; past it 429 at once",
          ),
        maxQueuedPerIp: integer(1, 10_000)
          .default(8)
          .describe(
            "logins from one client IP waiting for or running on this instance's bcrypt pool; past it 429 at once",
          ),
      })
      .describe('login throttling')
      .prefault({}),
    signup: z
      .strictObject({
        perIp: integer(1, 1_000_000).default(20).describe('signups per client IP per window'),
        windowSeconds: integer(1, 86_400).default(3600).describe('the window of `perIp`'),
      })
      .prefault({})
      .describe('signup throttling'),
    ssoLogin: z
      .strictObject({
        perIp: integer(1, 1_000_000)
          .default(60)
          .describe(
            'browser sign-ins started (`/1/tenants/{tenant_id}/sso/login`) per client IP per window: each keeps a pending sign-in in the store for 10 minutes',
          ),
        windowSeconds: integer(1, 86_400).default(600).describe('the window of `perIp`'),
      })
      .prefault({})
      .describe('browser sign-in throttling (`sso.enabled`)'),
    exchange: z
      .strictObject({
        perIp: integer(1, 1_000_000)
          .default(60)
          .describe(
            "token exchanges (`/1/oauth/token` with the token-exchange grant) and browser sign-in requests (`/1/tenants/{tenant_id}/sso/login`, `/1/sso/callback`) per client IP per window, counted before any provider is asked: each may make the gateway fetch from a tenant's identity provider",
          ),
        windowSeconds: integer(1, 86_400).default(60).describe('the window of `perIp`'),
      })
      .prefault({})
      .describe("requests that may reach tenants' identity providers, throttled (`sso.enabled`)"),
    passwordReset: z
      .strictObject({
        perEmail: integer(1, 1_000_000)
          .default(3)
          .describe(
            'reset mails sent to one address per window; past it the request is still answered 202 and nothing is sent',
          ),
        perIp: integer(1, 1_000_000)
          .default(30)
          .describe('password-reset requests per client IP per window; past it 429'),
        windowSeconds: integer(1, 86_400).default(3600).describe('the window of both'),
      })
      .prefault({})
      .describe(
        'password-reset throttling (`POST /1/password-resets`), and of verification mails sent again',
      ),
    secondFactor: z
      .strictObject({
        perUser: integer(1, 1_000)
          .default(5)
          .describe(
            'wrong second-factor codes (TOTP or recovery) one user may give per window; past it 429, however right the next code',
          ),
        windowSeconds: integer(1, 86_400).default(900).describe('the window of `perUser`'),
      })
      .prefault({})
      .describe(
        'brute force of TOTP and recovery codes, bounded per user on every instance together',
      ),
    bodyBytes: integer(256, 10 * 1024 * 1024)
      .default(16 * 1024)
      .describe(
        "largest body the gateway's own endpoints read (proxied bodies are streamed, unlimited)",
      ),
    // Off by default: `server.requestBodyIdleTimeoutMs` already stops a client
    // that stalls, and a cap would cut a long upload that keeps moving (Node's
    // own 300 s default cut them at ~329 s).
    requestTimeoutMs: integer(0, 86_400_000)
      .default(0)
      .describe(
        'a client slower than this with its whole request (headers and body) gets 408; `0`: no limit, the idle timeouts of `server` govern',
      ),
  })
  .meta({
    description:
      "Login and signup throttling, the body cap of the gateway's own endpoints, and a cap on a whole request.",
    examples: [{ login: { perEmail: 5, windowSeconds: 600 }, bodyBytes: 32768 }],
  })
  .prefault({});

/**
 * Connections per upstream origin, written once: the schema's default, and
 * the forwarder's when it is given no `upstreamPool` (`proxy/forward/forwarder.ts`).
 */
export const UPSTREAM_POOL_DEFAULTS = { maxConnections: 512 } as const;

/** The per-tenant share keeps one tenant's slow uploads from holding every connection. */
export const upstreamPool = z
  .strictObject({
    maxConnections: integer(1, 65_536)
      .default(UPSTREAM_POOL_DEFAULTS.maxConnections)
      .describe(
        "requests in flight to one upstream origin; more wait, first come first served, within their route's `timeoutMs`",
      ),
    // Omitted: see `tenant-slots.ts`.
    maxPerTenant: integer(1, 65_536)
      .optional()
      .describe(
        'requests one tenant may have in flight or waiting per upstream origin; past it 429. At most `maxConnections`; omitted: a quarter of `maxConnections`',
      ),
  })
  // Reported with every other problem of the config, even when a value here is wrong.
  .superRefine(checkUpstreamPool, { when: () => true })
  .meta({
    description: `Connections to each upstream origin, and each tenant's share of them. Omitted: ${UPSTREAM_POOL_DEFAULTS.maxConnections} connections per upstream origin, a quarter of them per tenant.`,
    examples: [{ maxConnections: 1024, maxPerTenant: 128 }],
  })
  .optional();

/** One side of `routes[].rateLimit`: a token bucket. */
const rateBucket = (who: string) =>
  z
    .strictObject({
      requestsPerSecond: decimal(0.001, 1_000_000).describe(
        `requests per second one ${who} may send under this route, cluster-wide (every instance sharing the store together); refilled continuously`,
      ),
      burst: decimal(1, 10_000_000).describe(
        `requests one ${who} may send at once after a quiet spell (the bucket's size); at least 1`,
      ),
    })
    .optional()
    .describe(
      `the ${who}'s token bucket; past it 429 \`too_many_requests\` with \`Retry-After\` and \`RateLimit\` headers. Omitted: no ${who} limit`,
    );

/** Token buckets per tenant and per user of a route (see `docs/rate-limits.md`). */
export const rateLimit = z
  .strictObject({
    perTenant: rateBucket('tenant'),
    perUser: rateBucket('user'),
  })
  .refine((r) => r.perTenant !== undefined || r.perUser !== undefined, {
    message: 'must set perTenant, perUser or both (omit the key for no limit)',
  });

/** The `rateLimits` section. */
export const rateLimits = z
  .strictObject({
    // The bound on what instances admit together does not depend on it: it
    // sets how long an instance whose share ran out waits for the next one,
    // against N / interval script calls per second for a bucket busy on N instances.
    reconcileIntervalMs: integer(50, 10_000)
      .default(500)
      .describe(
        'how often each instance settles its active rate-limit buckets with the shared store (one script call per active key); a restart applies a change',
      ),
  })
  .meta({
    description:
      'How instances sharing one Redis agree on `routes[].rateLimit` (see `docs/rate-limits.md`). The in-memory store limits in process only.',
    examples: [{ reconcileIntervalMs: 250 }],
  })
  .prefault({});

/** A tenant's share is at most the whole pool. The value may be partly invalid. */
function checkUpstreamPool(value: unknown, ctx: z.RefinementCtx): void {
  const { maxConnections, maxPerTenant } = (value ?? {}) as Record<string, unknown>;
  if (typeof maxConnections !== 'number' || typeof maxPerTenant !== 'number') return;
  if (maxPerTenant > maxConnections) {
    ctx.addIssue({
      code: 'custom',
      path: ['maxPerTenant'],
      message: `must not exceed upstreamPool.maxConnections (${maxConnections})`,
    });
  }
}
