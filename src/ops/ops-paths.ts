/**
 * The paths of the operations endpoints, apart from their handler so that
 * config validation can refuse a route they would shadow (`config/schema.ts`)
 * without loading the serving path.
 */

/** Health, readiness and metrics: on the admin listener, and on `listen` with `listen.opsEndpoints`. */
export const PROBE_PATHS: readonly string[] = ['/healthz', '/readyz', '/metrics'];

/** Re-reads the config file; on the admin listener only (`admin.configReload`). */
export const RELOAD_PATH = '/config/reload';
