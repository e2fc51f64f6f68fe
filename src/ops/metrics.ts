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

  const requestCounts = new RequestCounts();
  new Counter({
    name: 'tenant_gateway_requests_total',
    help: 'Requests by route, status class and outcome (accepted, or refused with its error code).',
    labelNames: ['route', 'status_class', 'outcome', 'reason'] as const,
    registers: [registry],
    collect() {
      requestCounts.drain((labels, increase) => this.inc(labels, increase));
    },
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

  // Label children cached by route: labelling is hashing, and this runs per request.
  const upstreamChildren = new Map<string, { observe(value: number): void }>();

  return {
    registry,
    request(route, status, refusal) {
      requestCounts.add(route, status, refusal);
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

type RequestLabels = Record<'route' | 'status_class' | 'outcome' | 'reason', string>;

interface RequestSeries {
  labels: RequestLabels;
  count: number;
  /** What prom-client has been handed so far. */
  reported: number;
}

/**
 * Request counts as plain numbers, handed to prom-client when `/metrics` is
 * scraped: a labelled `inc` validates and hashes its label values on every
 * call (with the histogram's `observe`, 14k instructions of a proxied
 * request, counted with callgrind). The keys here are the route's prefix and
 * the error code, the same strings on every request, so each lookup hashes
 * nothing new.
 */
class RequestCounts {
  /** route → status class (1 for 1xx … 5 for 5xx) → refusal ('' when accepted). */
  readonly #routes = new Map<string, Map<string, RequestSeries>[]>();

  add(route: string, status: number, refusal: string | undefined): void {
    let byClass = this.#routes.get(route);
    if (byClass === undefined) this.#routes.set(route, (byClass = []));
    const statusClass = Math.floor(status / 100);
    const byRefusal = (byClass[statusClass] ??= new Map());
    const reason = refusal ?? '';
    let series = byRefusal.get(reason);
    if (series === undefined) {
      series = {
        labels: {
          route,
          status_class: `${statusClass}xx`,
          outcome: refusal === undefined ? 'accepted' : 'refused',
          reason,
        },
        count: 0,
        reported: 0,
      };
      byRefusal.set(reason, series);
    }
    series.count++;
  }

  /** Hands each series' increase since the last drain to `report`. */
  drain(report: (labels: RequestLabels, increase: number) => void): void {
    for (const byClass of this.#routes.values()) {
      for (const byRefusal of byClass) {
        if (byRefusal === undefined) continue;
        for (const series of byRefusal.values()) {
          if (series.count === series.reported) continue;
          report(series.labels, series.count - series.reported);
          series.reported = series.count;
        }
      }
    }
  }
}
