/**
 * The metrics read from each request's outcome record: the request counter,
 * the duration histograms and the byte counters. The hot path does a few
 * map lookups on strings it already holds (the route's label, the method,
 * the reason code, the principal's kind) and plain additions; prom-client is handed the totals
 * when `/metrics` is scraped (see `batched-histogram.ts` for why).
 */
import { Counter, type Registry } from 'prom-client';
import type { PrincipalKind } from '../auth/credentials/authenticate.js';
import { BatchedHistogram, type Series } from './batched-histogram.js';
import type { Outcome, OutcomeReason } from './outcome.js';

/** Seconds; from a cache hit on loopback (~1 ms) to a long upstream call. */
export const DURATION_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
];

/**
 * The request counter's `principal` label: the kind of principal the request
 * acted for (issue 32: by kind, never by id), `none` when it proved no
 * credential (anonymous, or refused before one was proven). Only the counter
 * has it: the histograms stay by route and outcome.
 */
export type PrincipalLabel = PrincipalKind | 'none';

/** What the request metrics need of one finished request. */
export interface RequestRecord {
  route: string;
  method: string;
  status: number;
  outcome: Outcome;
  reason: OutcomeReason;
  principal: PrincipalLabel;
  /** Undefined for a request Node's parser refused before it began: no time to tell. */
  seconds: number | undefined;
  /** Time to the upstream's answer or failure, for forwarded requests. */
  upstreamSeconds: number | undefined;
  bytesIn: number;
  bytesOut: number;
  /** A WebSocket upgrade (counted in `tenant_gateway_websocket_upgrades_total` too). */
  upgrade?: boolean;
}

const OUTCOMES: readonly Outcome[] = ['accepted', 'refused', 'failed'];

type CountLabels = Record<'route' | 'method' | 'code' | 'outcome' | 'reason' | 'principal', string>;

interface CountSeries {
  labels: CountLabels;
  count: number;
  /** What prom-client has been handed so far. */
  reported: number;
}

/** One route's series, found with one lookup per request. */
class RouteSeries {
  /** method → status → reason → principal → count. */
  readonly counts = new Map<string, Map<number, Map<string, Map<string, CountSeries>>>>();
  /** By outcome (the index in OUTCOMES), made on first use: no empty series in a scrape. */
  readonly #durations: (Series | undefined)[] = [];
  readonly #upstream: (Series | undefined)[] = [];
  bytesIn = 0;
  bytesOut = 0;
  reportedIn = 0;
  reportedOut = 0;

  constructor(
    readonly route: string,
    private readonly durationFamily: BatchedHistogram,
    private readonly upstreamFamily: BatchedHistogram,
  ) {}

  observe(record: RequestRecord): void {
    const i = OUTCOMES.indexOf(record.outcome);
    if (record.seconds !== undefined) {
      const series = (this.#durations[i] ??= this.durationFamily.series(
        this.route,
        record.outcome,
      ));
      series.observe(record.seconds);
    }
    if (record.upstreamSeconds !== undefined) {
      const series = (this.#upstream[i] ??= this.upstreamFamily.series(this.route, record.outcome));
      series.observe(record.upstreamSeconds);
    }
  }

  count(record: RequestRecord): void {
    let byStatus = this.counts.get(record.method);
    if (byStatus === undefined) this.counts.set(record.method, (byStatus = new Map()));
    let byReason = byStatus.get(record.status);
    if (byReason === undefined) byStatus.set(record.status, (byReason = new Map()));
    let byPrincipal = byReason.get(record.reason);
    if (byPrincipal === undefined) byReason.set(record.reason, (byPrincipal = new Map()));
    let series = byPrincipal.get(record.principal);
    if (series === undefined) {
      series = {
        labels: {
          route: this.route,
          method: record.method,
          code: String(record.status),
          outcome: record.outcome,
          reason: record.reason,
          principal: record.principal,
        },
        count: 0,
        reported: 0,
      };
      byPrincipal.set(record.principal, series);
    }
    series.count++;
  }
}

export interface RequestMetrics {
  record(record: RequestRecord): void;
}

export function createRequestMetrics(registry: Registry): RequestMetrics {
  const routes = new Map<string, RouteSeries>();
  const duration = new BatchedHistogram(
    'tenant_gateway_request_duration_seconds',
    'Time from a request’s arrival to its response’s close, by route (a route’s label, api, forward-auth, admin, none) and outcome.',
    ['route', 'outcome'],
    DURATION_BUCKETS,
    registry,
  );
  const upstream = new BatchedHistogram(
    'tenant_gateway_upstream_duration_seconds',
    'Time from sending a request upstream to the upstream’s response head, or to the 502/504, by route and outcome.',
    ['route', 'outcome'],
    DURATION_BUCKETS,
    registry,
  );
  const drain = (report: (series: RouteSeries) => void) => {
    for (const series of routes.values()) report(series);
  };
  new Counter({
    name: 'tenant_gateway_requests_total',
    help: 'Finished requests by route, method, status code the client saw (499: it left), outcome (accepted, refused, failed), reason (the error code, upstream_broke, client_closed; empty when accepted) and principal (the kind of principal the request acted for: user, client, api_key; none when it proved no credential).',
    labelNames: ['route', 'method', 'code', 'outcome', 'reason', 'principal'] as const,
    registers: [registry],
    collect() {
      drain((route) => {
        for (const byStatus of route.counts.values())
          for (const byReason of byStatus.values())
            for (const byPrincipal of byReason.values())
              for (const series of byPrincipal.values()) {
                if (series.count === series.reported) continue;
                this.inc(series.labels, series.count - series.reported);
                series.reported = series.count;
              }
      });
    },
  });
  new Counter({
    name: 'tenant_gateway_request_bytes_total',
    help: 'Request body bytes received, by route.',
    labelNames: ['route'] as const,
    registers: [registry],
    collect() {
      drain((route) => {
        this.inc({ route: route.route }, route.bytesIn - route.reportedIn);
        route.reportedIn = route.bytesIn;
      });
    },
  });
  new Counter({
    name: 'tenant_gateway_response_bytes_total',
    help: 'Bytes sent to clients (response heads and bodies), by route.',
    labelNames: ['route'] as const,
    registers: [registry],
    collect() {
      drain((route) => {
        this.inc({ route: route.route }, route.bytesOut - route.reportedOut);
        route.reportedOut = route.bytesOut;
      });
    },
  });

  return {
    record(record) {
      let series = routes.get(record.route);
      if (series === undefined) {
        series = new RouteSeries(record.route, duration, upstream);
        routes.set(record.route, series);
      }
      series.count(record);
      series.observe(record);
      series.bytesIn += record.bytesIn;
      series.bytesOut += record.bytesOut;
    },
  };
}
