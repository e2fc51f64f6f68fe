/**
 * The audit streams on Redis: one Redis Stream per audit stream
 * (`<prefix>audit:users`, `<prefix>audit:tenant:<tenantId>`), each entry one
 * field `event` holding the event's JSON. Every command names one key, so it
 * runs on Redis Cluster wherever the key's slot lives.
 *
 * Bounded at each append: `XADD … MAXLEN ~ N` (approximate: Redis drops whole
 * nodes, which is what makes trimming cheap) and, with a maximum age, an
 * exact `XTRIM … MINID` in the same MULTI (one key, one round trip; exact,
 * because a quiet stream's old entries share a node with its new ones and an
 * approximate trim would never drop them).
 */
import type { Cluster, Redis } from 'ioredis';
import { attempt } from './redis-attempt.js';
import { GatewayError, isGatewayError } from '../errors.js';
import type { AuditEntry, AuditLog, AuditLogSpec, FollowFrom } from './audit-log.js';
import type { RedisKeys } from './redis-keys.js';
import { isCluster } from './redis-topology.js';

/**
 * @param blockMs how long one blocking read waits: below the command timeout,
 * which ioredis applies to blocking commands too
 */
export function redisAuditLogs(
  redis: Redis,
  keys: RedisKeys,
  blockMs: number,
): (spec: AuditLogSpec) => AuditLog {
  const streamOf = (key: string) => key.slice(keys.audit('').length);

  return (spec) => ({
    async append(stream, event) {
      const key = keys.audit(stream);
      const add = ['MAXLEN', '~', spec.maxEventsPerStream, '*', 'event', event] as const;
      if (spec.maxAgeSeconds === undefined) {
        await attempt(() => redis.xadd(key, ...add));
        return;
      }
      const minId = `${Date.now() - spec.maxAgeSeconds * 1000}-0`;
      const replies = await attempt(() =>
        redis
          .multi()
          .xadd(key, ...add)
          .xtrim(key, 'MINID', minId)
          .exec(),
      );
      const failed = replies?.find(([err]) => err !== null)?.[0];
      if (replies === null || failed)
        throw new GatewayError('unavailable', 'The store is unreachable.', { cause: failed });
    },

    async read(stream, sinceMs) {
      const replies = await attempt(() =>
        redis.xrange(keys.audit(stream), sinceMs > 0 ? `${sinceMs}-0` : '-', '+'),
      );
      return replies.map(entryOf);
    },

    async streams() {
      const nodes = isCluster(redis) ? (redis as unknown as Cluster).nodes('master') : [redis];
      const found = await attempt(() =>
        Promise.all(nodes.map((node) => scanStreams(node, `${globEscape(keys.audit(''))}*`))),
      );
      return [...new Set(found.flat().map(streamOf))].sort();
    },

    async follow(from, onEntry, signal) {
      // One blocking read per key on Cluster (XREAD may name keys of one slot only);
      // elsewhere one read covers them all.
      const groups = isCluster(redis) ? from.map((f) => [f]) : [from];
      await Promise.all(
        groups.map((group) => followGroup(redis, keys, group, blockMs, onEntry, signal)),
      );
    },
  });
}

async function followGroup(
  redis: Redis,
  keys: RedisKeys,
  group: FollowFrom[],
  blockMs: number,
  onEntry: (stream: string, entry: AuditEntry) => void,
  signal: AbortSignal,
): Promise<void> {
  if (group.length === 0) return;
  // A blocking read holds its connection: one of its own, so nothing else waits behind it.
  const connection = redis.duplicate();
  const stop = () => connection.disconnect();
  signal.addEventListener('abort', stop, { once: true });
  const after = new Map(group.map((f) => [keys.audit(f.stream), f.after]));
  const streamOf = new Map(group.map((f) => [keys.audit(f.stream), f.stream]));
  try {
    await connection.connect();
    while (!signal.aborted) {
      const reply = await connection
        .xread('BLOCK', blockMs, 'STREAMS', ...after.keys(), ...after.values())
        .catch((err: unknown) => {
          if (signal.aborted) return null;
          throw err;
        });
      for (const [key, entries] of reply ?? []) {
        for (const raw of entries) {
          const entry = entryOf(raw);
          after.set(key, entry.id);
          onEntry(streamOf.get(key) as string, entry);
        }
      }
    }
  } catch (err) {
    if (isGatewayError(err)) throw err;
    throw new GatewayError('unavailable', 'The store is unreachable.', { cause: err });
  } finally {
    signal.removeEventListener('abort', stop);
    connection.disconnect();
  }
}

async function scanStreams(node: Redis, match: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await node.scan(cursor, 'MATCH', match, 'COUNT', 1000, 'TYPE', 'stream');
    found.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return found;
}

function entryOf([id, fields]: [string, string[]]): AuditEntry {
  const at = fields.indexOf('event');
  return { id, event: at >= 0 && at % 2 === 0 ? (fields[at + 1] ?? '') : '' };
}

/** A key prefix may hold glob characters: matched literally. */
function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}
