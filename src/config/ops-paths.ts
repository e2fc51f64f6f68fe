/**
 * The paths of the operations endpoints (`ops/ops-endpoints.ts`), below both
 * `config`, which refuses a route they would shadow, and `ops`: validating
 * a config loads nothing of the serving path.
 */

/** Health, readiness and metrics: on the admin listener, and on `listen` with `listen.opsEndpoints`. */
export const PROBE_PATHS: readonly string[] = ['/healthz', '/readyz', '/metrics'];

/** Re-reads the config file; on the admin listener only (`admin.configReload`). */
export const RELOAD_PATH = '/config/reload';
