/**
 * How a Redis connection is named in logs and errors: never its password.
 * Apart from `redis-connection.ts`, which loads ioredis: the core names the
 * store it connected to without loading the client for an in-memory store.
 */

/** What names a connection: the part of `RedisConnectionOptions` (`redis-connection.ts`) read here. */
export interface RedisWhere {
  url?: string | undefined;
  sentinel?: { name: string; nodes: string[] } | undefined;
  cluster?: { nodes: string[] } | undefined;
}

/** Where the store is, without any password: safe for logs and error messages. */
export function redisForDisplay(options: RedisWhere): string {
  if (options.url !== undefined) return redisUrlForDisplay(options.url);
  if (options.sentinel !== undefined)
    return `sentinel master "${options.sentinel.name}" via ${options.sentinel.nodes.join(', ')}`;
  return `cluster via ${options.cluster?.nodes.join(', ') ?? '(no nodes)'}`;
}

/**
 * The URL with its password (and query, which ioredis also reads options such
 * as `password` from) removed: safe for logs and error messages.
 */
export function redisUrlForDisplay(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    parsed.search = '';
    parsed.hash = '';
    return parsed.toString();
  } catch {
    // An unparsable URL may still hold a secret: show none of it.
    return '(unparsable Redis URL)';
  }
}
