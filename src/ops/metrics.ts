/**
 * Prometheus metrics (prom-client), served at `/metrics`. The gateway's own
 * are named `tenant_gateway_*`; Node's default metrics keep their standard
 * names (`process_cpu_seconds_total`, `nodejs_*`), so stock Node.js
 * dashboards find them. Every label has a small, fixed set of values (a
 * route's label, a method, a status code, an error code), never a user,
 * tenant or path. The list with meanings: `docs/operations.md`.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { REFRESH_OUTCOMES, type RefreshOutcome } from '../auth/refresh/refresh-grant.js';
import { FEDERATION_OUTCOMES, type FederationOutcome } from '../auth/federation/refusals.js';
import { TOKEN_REFUSALS, type TokenRefusal } from '../auth/tokens/token-refusals.js';
import { BatchedHistogram, type Series } from './batched-histogram.js';
import { registerMemoryLimits } from './memory-limits.js';
import { SIGN_IN_OUTCOMES, type SignInOutcome } from './sign-in-outcomes.js';
import { MAIL_KINDS, type MailKind, type MailOutcome } from '../mail/mailer.js';
import { createRequestMetrics, DURATION_BUCKETS, type RequestRecord } from './request-metrics.js';
import { registerHttp2Metrics, type Http2Refusal } from './http2-metrics.js';

export type { RequestRecord } from './request-metrics.js';

export interface CacheStats {
  hits: number;
  misses: number;
}

/** What the metrics read from the rest of the gateway when scraped. */
export interface MetricSources {
  version: string;
  tokenCache: () => CacheStats;
  sessionCache: () => CacheStats & { live: boolean };
  /** Requests on the main listener whose response has not closed. */
  inFlight: () => number;
  /** bcrypt jobs queued or running. */
  passwordQueueDepth: () => number;
  /** Unix ms when the key that signs new tokens was made. */
  signingKeyCreatedAt: () => number;
  /** Resolves when the store answers a ping; rejects otherwise. */
  pingStore: () => Promise<void>;
  /** Rate-limit decisions since the last call, per route and side (the call resets them). */
  rateLimitDecisions: () => {
    route: string;
    limit: string;
    admitted: number;
    limited: number;
    waited: number;
  }[];
  /** Rate-limit buckets this instance holds. */
  rateLimitBuckets: () => number;
}

export interface Metrics {
  registry: Registry;
  /** One finished request: its outcome record. */
  request(record: RequestRecord): void;
  /** An access token issued: to a user (Basic login) or a machine client (client credentials). */
  tokenIssued(kind?: 'user' | 'client'): void;
  /** A refresh-token grant, by outcome (`auth/refresh/refresh-grant.ts`). */
  refreshed(outcome: RefreshOutcome): void;
  /** A token exchange of a tenant's provider's ID token, by outcome (`auth/federation/refusals.ts`). */
  federatedSignIn(outcome: FederationOutcome): void;
  /** A sign-in post on the sign-in page, by outcome (`sign-in-outcomes.ts`). */
  signIn(outcome: SignInOutcome): void;
  /** A Basic login refused on the identity endpoints (never a proxied request's 429). */
  loginRefused(reason: 'invalid_credentials' | 'too_many_requests'): void;
  /** A bearer token refused (`invalid_token`), on any entry way: why. */
  tokenRefused(reason: TokenRefusal): void;
  configReload(ok: boolean): void;
  sessionEvent(kind: string): void;
  /** One store call: its method name, duration and whether it answered. */
  storeCall(operation: string, seconds: number, ok: boolean): void;
  /** How long a bcrypt job waited for a thread. */
  passwordWait(seconds: number): void;
  /** A revocation confirmed by the lease holders (lease mode); `fenced`: some holder lost its lease. */
  revocationConfirmed(seconds: number, fenced: boolean): void;
  /** An audit event the store did not take (it was logged). */
  auditWriteFailure(): void;
  /** A rate-limit reconcile that reached no bucket's store (limits held in process meanwhile). */
  rateLimitReconcileFailed(): void;
  /** A mail's end: sent, or given up after its last attempt (`mail/mailer.ts`). */
  mail(kind: MailKind, outcome: MailOutcome): void;
  /** An HTTP/2 connection or stream refused by the main listener's limits (`http2-metrics.ts`). */
  http2Refused(reason: Http2Refusal): void;
  /** A reload of `listen.tls`'s files: applied, or refused (the old pair kept). */
  tlsReload(ok: boolean): void;
}

/** How long the store may take to answer the scrape's ping before it counts as down. */
const STORE_PING_TIMEOUT_MS = 1000;

export function createMetrics(sources: MetricSources): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });
  const requests = createRequestMetrics(registry);
  registerGauges(registry, sources);
  registerCacheLookups(registry, sources);
  registerRateLimits(registry, sources);
  const counters = registerCounters(registry);
  const store = registerStoreMetrics(registry);
  const passwordWait = new BatchedHistogram(
    'tenant_gateway_password_wait_seconds',
    'Time a bcrypt job waited before a worker thread took it.',
    [],
    DURATION_BUCKETS,
    registry,
  ).series();
  const reloads = registerReloads(registry);
  const http2 = registerHttp2Metrics(registry);
  const confirmations = new Histogram({
    name: 'tenant_gateway_revocation_confirm_seconds',
    help: 'Time a revocation made here waited for every lease holder (lease mode), by whether a silent holder had to be fenced.',
    labelNames: ['fenced'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });

  return {
    registry,
    request(record) {
      requests.record(record);
      if (record.upgrade === true)
        counters.upgrades.inc({
          route: record.route,
          outcome: record.outcome,
          reason: record.reason,
        });
      if (record.reason === 'unavailable') store.errors.inc();
    },
    tokenIssued: (kind = 'user') => counters.tokens.inc({ kind }),
    refreshed: (outcome) => counters.refreshes.inc({ outcome }),
    federatedSignIn: (outcome) => counters.federatedSignIns.inc({ outcome }),
    signIn: (outcome) => counters.signIns.inc({ outcome }),
    loginRefused: (reason) => counters.loginFailures.inc({ reason }),
    tokenRefused: (reason) => counters.tokenRefusals.inc({ reason }),
    configReload(ok) {
      reloads.count.inc({ result: ok ? 'success' : 'failure' });
      if (ok) reloads.last.setToCurrentTime();
    },
    sessionEvent: (kind) => counters.sessionEvents.inc({ kind }),
    storeCall: (operation, seconds, ok) => store.call(operation, seconds, ok),
    passwordWait: (seconds) => passwordWait.observe(seconds),
    revocationConfirmed: (seconds, fenced) =>
      confirmations.observe({ fenced: fenced ? 'true' : 'false' }, seconds),
    auditWriteFailure: () => counters.auditWriteFailures.inc(),
    mail: (kind, outcome) => counters.mails.inc({ kind, outcome }),
    rateLimitReconcileFailed: () => counters.reconcileFailures.inc(),
    ...http2,
  };
}

/** The gauges read from the gateway's parts when scraped, and the build's. */
function registerGauges(registry: Registry, sources: MetricSources): void {
  new Gauge({
    name: 'tenant_gateway_build_info',
    help: 'Always 1; the labels name the running build.',
    labelNames: ['version', 'node_version'] as const,
    registers: [registry],
  }).set({ version: sources.version, node_version: process.version }, 1);
  registerMemoryLimits(registry);
  new Gauge({
    name: 'tenant_gateway_requests_in_flight',
    help: 'Requests on the main listener whose response has not closed.',
    registers: [registry],
    collect() {
      this.set(sources.inFlight());
    },
  });
  new Gauge({
    name: 'tenant_gateway_store_up',
    help: '1 when the store answered a ping at this scrape, else 0.',
    registers: [registry],
    async collect() {
      this.set((await answers(sources.pingStore(), STORE_PING_TIMEOUT_MS)) ? 1 : 0);
    },
  });
  new Gauge({
    name: 'tenant_gateway_password_queue_depth',
    help: 'bcrypt jobs (logins, password changes, signups) queued or running.',
    registers: [registry],
    collect() {
      this.set(sources.passwordQueueDepth());
    },
  });
  new Gauge({
    name: 'tenant_gateway_signing_key_age_seconds',
    help: 'Age of the key that signs new tokens (from its kid when it is a timestamp, else its file time).',
    registers: [registry],
    collect() {
      this.set(Math.max(0, (Date.now() - sources.signingKeyCreatedAt()) / 1000));
    },
  });
  new Gauge({
    name: 'tenant_gateway_session_events_live',
    help: '1 while session invalidation events are delivered (the session cache is trusted), else 0.',
    registers: [registry],
    collect() {
      this.set(sources.sessionCache().live ? 1 : 0);
    },
  });
}

/** The counters the gateway increments as things happen. */
function registerCounters(registry: Registry) {
  const upgrades = new Counter({
    name: 'tenant_gateway_websocket_upgrades_total',
    help: 'WebSocket upgrade requests by route, outcome (accepted: the upstream answered; refused; failed) and reason, as in tenant_gateway_requests_total, which counts them too.',
    labelNames: ['route', 'outcome', 'reason'] as const,
    registers: [registry],
  });
  const tokens = new Counter({
    name: 'tenant_gateway_tokens_issued_total',
    help: 'Access tokens issued, by principal kind (user, client).',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  for (const kind of ['user', 'client'] as const) tokens.inc({ kind }, 0);
  const refreshes = new Counter({
    name: 'tenant_gateway_refreshes_total',
    help: 'Refresh-token grants by outcome: rotated, grace (a token presented again within the grace: the same successor), reused (a used token: its family revoked), invalid (unknown, expired, or its session ended).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  for (const outcome of REFRESH_OUTCOMES) refreshes.inc({ outcome }, 0);
  const logins = registerLoginCounters(registry);
  const tokenRefusals = new Counter({
    name: 'tenant_gateway_token_refusals_total',
    help: 'Requests refused invalid_token (proxy, WebSocket upgrade, forward-auth, api) by why: missing, not_bearer, malformed, bad_signature, unknown_kid, wrong_alg, wrong_issuer, wrong_audience, wrong_type, expired, not_yet_valid, issued_in_future, claims, revoked, session_ended, membership_ended, unknown_user.',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  // Every reason exported from the start: a series that first appears at 1 shows no increase.
  for (const reason of TOKEN_REFUSALS) tokenRefusals.inc({ reason }, 0);
  const auditWriteFailures = new Counter({
    name: 'tenant_gateway_audit_write_failures_total',
    help: 'Audit events the store did not take (each is still in the log, with the reason).',
    registers: [registry],
  });
  const reconcileFailures = new Counter({
    name: 'tenant_gateway_rate_limit_reconcile_failures_total',
    help: 'Rate-limit reconciles that could not reach the store; meanwhile each instance limits alone at its last known share.',
    registers: [registry],
  });
  reconcileFailures.inc(0);
  const mails = registerMailCounter(registry);
  const sessionEvents = new Counter({
    name: 'tenant_gateway_session_events_total',
    help: 'Session events this instance received, by kind (session-ended, token-revoked, membership-removed, membership-added).',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  return {
    upgrades,
    tokens,
    refreshes,
    ...logins,
    tokenRefusals,
    auditWriteFailures,
    reconcileFailures,
    mails,
    sessionEvents,
  };
}

/** Sign-ins and logins by outcome: the IdP exchanges, the sign-in page, refused Basic logins. */
function registerLoginCounters(registry: Registry) {
  const federatedSignIns = new Counter({
    name: 'tenant_gateway_federated_sign_ins_total',
    help: "Token exchanges of a tenant's identity provider's ID token, by outcome: signed_in, user_created, member_joined, unavailable (the provider, or the store, unreachable: 503), or why it was refused (no_provider, foreign_issuer, unknown_issuer, malformed, algorithm, unknown_key, bad_signature, expired, audience, claims, email_not_verified, domain_not_allowed, user_disabled, not_linked).",
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  for (const outcome of FEDERATION_OUTCOMES) federatedSignIns.inc({ outcome }, 0);
  const signIns = new Counter({
    name: 'tenant_gateway_sign_ins_total',
    help: 'Sign-in posts on the sign-in page by outcome: signed_in, wrong_credentials, throttled, csrf_refused, not_member, expired (a tenant choice too late or used), invalid_request, unavailable.',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  for (const outcome of SIGN_IN_OUTCOMES) signIns.inc({ outcome }, 0);
  const loginFailures = new Counter({
    name: 'tenant_gateway_login_failures_total',
    help: 'Refused Basic logins on the identity endpoints by reason (invalid_credentials, too_many_requests: locked out or throttled).',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  return { federatedSignIns, signIns, loginFailures };
}

/** Mails sent or given up, by kind; every pair exported from the start at 0. */
function registerMailCounter(registry: Registry) {
  const mails = new Counter({
    name: 'tenant_gateway_mails_total',
    help: 'Mails the gateway sent (outcome sent) or gave up after its last attempt (failed, each logged), by kind: email_verification, password_reset, invitation.',
    labelNames: ['kind', 'outcome'] as const,
    registers: [registry],
  });
  for (const kind of MAIL_KINDS)
    for (const outcome of ['sent', 'failed']) mails.inc({ kind, outcome }, 0);
  return mails;
}

/** Store errors, and each store call's duration by operation and result. */
function registerStoreMetrics(registry: Registry) {
  const errors = new Counter({
    name: 'tenant_gateway_store_errors_total',
    help: 'Requests answered 503 unavailable because the store was unreachable.',
    registers: [registry],
  });
  const calls = new BatchedHistogram(
    'tenant_gateway_store_command_duration_seconds',
    'Store calls (one or a few Redis commands each) by operation and result (ok, error).',
    ['operation', 'result'],
    DURATION_BUCKETS,
    registry,
  );
  const series = new Map<string, Series>();
  return {
    errors,
    call(operation: string, seconds: number, ok: boolean): void {
      const key = ok ? operation : `${operation} error`;
      let one = series.get(key);
      if (one === undefined) {
        one = calls.series(operation, ok ? 'ok' : 'error');
        series.set(key, one);
      }
      one.observe(seconds);
    },
  };
}

function registerReloads(registry: Registry) {
  const count = new Counter({
    name: 'tenant_gateway_config_reloads_total',
    help: 'Config reloads (SIGHUP or POST /config/reload) by result (success, failure).',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  // Both results exported from the start: a series that first appears at 1
  // shows Prometheus no increase, and the first refused reload would alert nobody.
  for (const result of ['success', 'failure']) count.inc({ result }, 0);
  const last = new Gauge({
    name: 'tenant_gateway_config_last_reload_success_timestamp_seconds',
    help: 'Unix time of the last config (re)load that took effect; the start counts.',
    registers: [registry],
  });
  last.setToCurrentTime();
  return { count, last };
}

/** The in-process caches' lookups, counted since start by the caches themselves. */
function registerCacheLookups(registry: Registry, sources: MetricSources): void {
  /** A counter is handed the increase since the last scrape. */
  const seenTotals = new Map<string, number>();
  function reportTotal(counter: Counter<string>, labels: Record<string, string>, total: number) {
    const key = `${labels.cache} ${labels.result}`;
    counter.inc(labels, total - (seenTotals.get(key) ?? 0));
    seenTotals.set(key, total);
  }
  new Counter({
    name: 'tenant_gateway_cache_lookups_total',
    help: 'Lookups in the in-process caches by cache (verified_tokens, sessions) and result (hit, miss).',
    labelNames: ['cache', 'result'] as const,
    registers: [registry],
    collect() {
      const token = sources.tokenCache();
      const session = sources.sessionCache();
      reportTotal(this, { cache: 'verified_tokens', result: 'hit' }, token.hits);
      reportTotal(this, { cache: 'verified_tokens', result: 'miss' }, token.misses);
      reportTotal(this, { cache: 'sessions', result: 'hit' }, session.hits);
      reportTotal(this, { cache: 'sessions', result: 'miss' }, session.misses);
    },
  });
}

/**
 * The routes' rate limits: counted by the limiter in plain numbers per route
 * and side, handed over at scrape time (one hand-over for both counters: the
 * waits are registered after, so read after).
 */
function registerRateLimits(registry: Registry, sources: MetricSources): void {
  const waits = new Counter({
    name: 'tenant_gateway_rate_limit_lease_waits_total',
    help: "Requests that waited for their bucket's first lease from the store (one store round trip in their latency), by route and limit.",
    labelNames: ['route', 'limit'] as const,
    registers: [],
  });
  new Counter({
    name: 'tenant_gateway_rate_limit_decisions_total',
    help: 'Rate-limit decisions on proxied requests and WebSocket upgrades by route, limit (tenant, user) and outcome (admitted, limited).',
    labelNames: ['route', 'limit', 'outcome'] as const,
    registers: [registry],
    collect() {
      for (const { route, limit, admitted, limited, waited } of sources.rateLimitDecisions()) {
        this.inc({ route, limit, outcome: 'admitted' }, admitted);
        this.inc({ route, limit, outcome: 'limited' }, limited);
        waits.inc({ route, limit }, waited);
      }
    },
  });
  registry.registerMetric(waits);
  new Gauge({
    name: 'tenant_gateway_rate_limit_buckets',
    help: 'Rate-limit buckets (route, tenant or user) this instance holds; idle ones are dropped at each reconcile.',
    registers: [registry],
    collect() {
      this.set(sources.rateLimitBuckets());
    },
  });
}

async function answers(ping: Promise<void>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(resolve, timeoutMs, false);
  });
  try {
    return await Promise.race([ping.then(() => true), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
