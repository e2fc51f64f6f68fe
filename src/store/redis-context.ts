/**
 * What the Redis store's parts share (`redis-users.ts`, `redis-tenants.ts`,
 * `redis-memberships.ts`, `redis-revocations.ts`, `redis-clients.ts`,
 * `redis-api-keys.ts`, `redis-refresh.ts`, `redis-idps.ts`; assembled by `redis-store.ts`).
 */
import { GatewayError } from '../errors.js';
import type { RedisKeys } from './redis-keys.js';
import type { ScriptedRedis } from './redis-scripts.js';
import { fannedOut } from './redis-write-acks.js';
import type { SessionEvent } from './types.js';

export interface RedisStoreContext {
  readonly redis: ScriptedRedis;
  readonly keys: RedisKeys;
  /** Resolves once a replica has the write to `key` (Sentinel, Cluster; see `redis-write-acks.ts`). */
  replicated(key: string): Promise<void>;
  /**
   * Tells this store's own watchers of its own session write, before the
   * write resolves: the instance that made a change never acts on the old
   * state while its own pub/sub message is still on the wire.
   */
  tellWatchers(event: SessionEvent): void;
}

/** How a session write is answered: a replica has it, and its event has left Redis. */
export async function acknowledged(context: RedisStoreContext, key: string): Promise<void> {
  await context.replicated(key);
  await fannedOut(context.redis, key);
}

export function unexpectedReply(): GatewayError {
  return new GatewayError('internal_error', 'The store gave an unexpected reply.');
}
