/**
 * The core (store, signing keys, password pool, sessions, token checks,
 * accounts, audit) as the gateway builds it: observed by the metrics and the
 * tracer, holding a revocation lease when in lease mode, seeded from
 * `config.seed`. `createCore` closes what it opened when it fails itself.
 */
import type { Logger } from 'pino';
import { applySeed, readSeedFile, type SeedData, type SeedSummary } from '../auth/seed.js';
import { isGatewayError } from '../errors.js';
import type { GatewayConfig } from '../config/index.js';
import { createCore, type Core, type CoreObservers } from '../core/create-core.js';
import type { Metrics } from '../ops/metrics.js';
import type { Tracing } from '../ops/tracing.js';
import { built, type Built } from './builders.js';

export async function buildCore(
  config: GatewayConfig,
  log: Logger,
  metrics: Metrics,
  tracing: Tracing | undefined,
  clock?: () => number,
): Promise<Built<Core>> {
  const observers: CoreObservers = {
    storeCall: (operation, seconds, ok) => metrics.storeCall(operation, seconds, ok),
    passwordWait: (seconds) => metrics.passwordWait(seconds),
    step: tracing?.step,
    revocationConfirmed: (seconds, fenced) => metrics.revocationConfirmed(seconds, fenced),
    auditWriteFailure: () => metrics.auditWriteFailure(),
    mail: (kind, outcome) => metrics.mail(kind, outcome),
  };
  const core = await createCore(config, log, observers, {
    serving: true,
    ...(clock === undefined ? {} : { clock }),
  });
  core.sessions.watch({ onEvent: (event) => metrics.sessionEvent(event.kind), onLive: () => {} });
  return built(core, () => core.close());
}

/** The seed file's users and tenants, written at start (`config.seed`). */
export async function seedStore(
  config: GatewayConfig,
  core: Core,
  log: Logger,
): Promise<Built<void>> {
  if (config.seed !== undefined) {
    const seed = await readSeedFile(config.seed);
    const deadline = Date.now() + (config.store.redis?.connectTimeoutMs ?? 0);
    const summary = await seedUntil(seed, core, log, deadline);
    log.info({ seed: config.seed, ...summary }, 'seed applied');
  }
  return built(undefined);
}

/**
 * Applies the seed, again while a write was `unavailable` (a replica that did
 * not acknowledge in time: the write is on the master) and the store's
 * connect timeout has not passed: the seed is idempotent, so a start rides
 * out a slow replica as it rides out a slow connection.
 */
async function seedUntil(
  seed: SeedData,
  core: Core,
  log: Logger,
  deadline: number,
): Promise<SeedSummary> {
  for (;;) {
    try {
      return await applySeed(seed, core);
    } catch (err) {
      if (!isGatewayError(err) || err.code !== 'unavailable' || Date.now() >= deadline) throw err;
      log.warn({ code: err.code }, 'seed: the store did not confirm a write; applying it again');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
