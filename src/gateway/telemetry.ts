/**
 * The metrics registry and the tracer. The metrics read the other parts only
 * when scraped (`Scraped`): they are built first, so every later part can
 * count from its start.
 */
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/index.js';
import type { Core } from '../core/create-core.js';
import { createMetrics, type Metrics } from '../ops/metrics.js';
import type { RequestRecorder } from '../ops/request-recorder.js';
import type { Tracing } from '../ops/tracing.js';
import type { RouteRateLimits } from '../proxy/rate-limits/route-rate-limits.js';
import type { TrustCheck } from '../proxy/decide/trusted-proxies.js';
import { VERSION } from '../version.js';
import { built, type Built } from './builders.js';

/** The parts a scrape reads, set as they are built (a scrape comes only once the gateway listens). */
export interface Scraped {
  core?: Core;
  recorder?: RequestRecorder;
  rateLimits?: RouteRateLimits;
}

export function buildMetrics(scraped: Scraped): Built<Metrics> {
  const part = <K extends keyof Scraped>(key: K): NonNullable<Scraped[K]> => {
    const value = scraped[key];
    if (value === undefined) throw new Error(`metrics: the ${key} is not built yet`);
    return value;
  };
  return built(
    createMetrics({
      version: VERSION,
      tokenCache: () => part('core').verifier.stats(),
      sessionCache: () => part('core').sessions.stats(),
      inFlight: () => part('recorder').inFlight(),
      passwordQueueDepth: () => part('core').passwords.queueDepth(),
      signingKeyCreatedAt: () => part('core').keyring.current.signing.createdAt,
      pingStore: () => part('core').store.ping(),
      rateLimitDecisions: () => part('rateLimits').drainDecisions(),
      rateLimitBuckets: () => part('rateLimits').size(),
    }),
  );
}

/**
 * Only a trusted proxy may continue its trace (`trusted` is read per request:
 * it follows reloads). The OpenTelemetry SDK is loaded here, and only when
 * tracing is on: off, a start does not pay its ~0.3 s of CPU.
 */
export async function buildTracing(
  config: GatewayConfig['tracing'],
  trusted: () => TrustCheck,
  log: Logger,
): Promise<Built<Tracing | undefined>> {
  if (!config.enabled) return built(undefined);
  const { createTracing } = await import('../ops/tracing.js');
  const tracing = createTracing(config, (peer) => trusted()(peer), log);
  return built(tracing, tracing === undefined ? undefined : () => tracing.shutdown());
}
