/**
 * The parts the proxied traffic runs through: readiness, the route token
 * buckets, the upstream pools and the watch on proxied WebSockets' sessions.
 */
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/index.js';
import type { Core } from '../core/create-core.js';
import type { Metrics } from '../ops/metrics.js';
import { createReadiness, type Readiness } from '../ops/readiness.js';
import {
  createRouteRateLimits,
  type RouteRateLimits,
} from '../proxy/rate-limits/route-rate-limits.js';
import { createForwarder, type Forwarder } from '../proxy/forward/forwarder.js';
import { createLiveWebSockets, type LiveWebSockets } from '../proxy/forward/live-websockets.js';
import { built, type Built } from './builders.js';
import type { LiveSettings } from './proxy-settings.js';

/** `/readyz`: `readiness.requireStore` is read at each check, so a reload applies it. */
export function buildReadiness(core: Core, live: LiveSettings): Built<Readiness> {
  const requireStore = () => live.config.readiness.requireStore;
  return built(createReadiness({ store: core.store, keyring: core.keyring, requireStore }));
}

/** Buckets live on across reloads: a route's are keyed by its label, rate and burst. */
export function buildRateLimits(
  config: GatewayConfig,
  core: Core,
  metrics: Metrics,
  log: Logger,
): Built<RouteRateLimits> {
  const limits = createRouteRateLimits({
    leases: core.store.leaseRates?.bind(core.store),
    intervalMs: config.rateLimits.reconcileIntervalMs,
    log,
    onReconcileFailure: () => metrics.rateLimitReconcileFailed(),
  });
  return built(limits, () => limits.close());
}

export function buildForwarder(config: GatewayConfig): Built<Forwarder> {
  const forwarder = createForwarder(config.upstreamPool);
  return built(forwarder, () => forwarder.close());
}

export function buildLiveWebSockets(config: GatewayConfig, core: Core): Built<LiveWebSockets> {
  const { sessions } = core;
  const sockets = createLiveWebSockets({
    sessions,
    clockSkewSeconds: config.tokens.clockSkewSeconds,
    apiKeys: core.apiKeys,
  });
  return built(sockets, () => sockets.close());
}
