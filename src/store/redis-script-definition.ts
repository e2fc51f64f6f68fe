/** One Lua script of the Redis store (`redis-scripts.ts` and the `redis-*-scripts.ts` of each concern). */
export interface ScriptDefinition {
  /** Omitted: the key count varies, and each call passes it first (as EVALSHA takes it). */
  readonly numberOfKeys?: number;
  readonly lua: string;
}
