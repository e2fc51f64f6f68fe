/**
 * Prometheus metrics (prom-client), served at `/metrics`. Names are prefixed
 * `tenant_gateway_`; every label has a small, fixed set of values (a route's
 * prefix, a status class, an error code), never a user, tenant or path.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface CacheStats {
  hits: number;
  misses: number;
}

export interface Metrics {
  registry: Registry;
  /** One finished request: `route` is a route prefix, `api`, `forward-auth`, `admin` or `none`. */
  request(route: string, status: number, refusal: string | undefined): void;
  upstreamSeconds(route: string, seconds: number): void;
  tokenIssued(): void;
  upgrade(route: string, refusal: string | undefined): void;
}

export function createMetrics(sources: {
  tokenCache: () => CacheStats;
  sessionCache: () => CacheStats & { live: boolean };
}): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({
    register: registry,
    prefix: 'tenant_gateway_',
    eventLoopMonitoringPrecision: 20,
  });

  const requests = new Counter({
    name: 'tenant_gateway_requests_total',
    help: 'Requests by route, status class and outcome (accepted, or refused with its error code).',
    labelNames: ['route', 'status_class', 'outcome', 'reason'] as const,
    registers: [registry],
  });
  const upgrades = new Counter({
    name: 'tenant_gateway_websocket_upgrades_total',
    help: 'WebSocket upgrade requests by route and outcome.',
    labelNames: ['route', 'outcome', 'reason'] as const,
    registers: [registry],
  });
  const upstream = new Histogram({
    name: 'tenant_gateway_upstream_duration_seconds',
    help: 'Time from forwarding a request to the upstream response headers.',
    labelNames: ['route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const tokens = new Counter({
    name: 'tenant_gateway_tokens_issued_total',
    help: 'Access tokens issued.',
    registers: [registry],
  });
  const loginFailures = new Counter({
    name: 'tenant_gateway_login_failures_total',
    help: 'Refused Basic logins by reason (invalid_credentials, too_many_requests).',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const storeErrors = new Counter({
    name: 'tenant_gateway_store_errors_total',
    help: 'Requests refused with 503 because the store was unreachable.',
    registers: [registry],
  });
  new Gauge({
    name: 'tenant_gateway_cache_lookups',
    help: 'Lookups in the in-process caches since start, by cache and result (hit, miss).',
    labelNames: ['cache', 'result'] as const,
    registers: [registry],
    collect() {
      const token = sources.tokenCache();
      const session = sources.sessionCache();
      this.set({ cache: 'verified_tokens', result: 'hit' }, token.hits);
      this.set({ cache: 'verified_tokens', result: 'miss' }, token.misses);
      this.set({ cache: 'sessions', result: 'hit' }, session.hits);
      this.set({ cache: 'sessions', result: 'miss' }, session.misses);
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

  // Label children cached by their values: labelling is hashing, and this runs per request.
  const requestChildren = new Map<string, { inc(): void }>();
  const upstreamChildren = new Map<string, { observe(value: number): void }>();

  return {
    registry,
    request(route, status, refusal) {
      const statusClass = `${Math.floor(status / 100)}xx`;
      const key = `${route}\u0000${statusClass}\u0000${refusal ?? ''}`;
      let child = requestChildren.get(key);
      if (child === undefined) {
        child = requests.labels({
          route,
          status_class: statusClass,
          outcome: refusal === undefined ? 'accepted' : 'refused',
          reason: refusal ?? '',
        });
        requestChildren.set(key, child);
      }
      child.inc();
      if (refusal === 'unavailable') storeErrors.inc();
      if (refusal === 'invalid_credentials' || refusal === 'too_many_requests') {
        loginFailures.inc({ reason: refusal });
      }
    },
    upstreamSeconds(route, seconds) {
      let child = upstreamChildren.get(route);
      if (child === undefined) upstreamChildren.set(route, (child = upstream.labels({ route })));
      child.observe(seconds);
    },
    tokenIssued: () => tokens.inc(),
    upgrade(route, refusal) {
      upgrades.inc({
        route,
        outcome: refusal === undefined ? 'accepted' : 'refused',
        reason: refusal ?? '',
      });
      if (refusal === 'unavailable') storeErrors.inc();
    },
  };
}
