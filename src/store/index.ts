export type {
  NewUser,
  Store,
  TenantIdp,
  TenantInput,
  TenantRecord,
  TenantType,
  UserRecord,
} from './types.js';
export { createMemoryStore } from './memory-store.js';
export { createRedisStore, type RedisStoreOptions } from './redis-store.js';
export { redisForDisplay, redisUrlForDisplay } from './redis-display.js';
export { normaliseEmail } from './normalise.js';
export type { LoginCounter, LoginCounterSpec } from './login-counters.js';
export {
  tenantStream,
  USER_STREAM,
  type AuditEntry,
  type AuditLog,
  type AuditLogSpec,
} from './audit-log.js';
