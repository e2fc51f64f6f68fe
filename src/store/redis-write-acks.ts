/**
 * When a Redis store write may be answered: once a replica has it (Sentinel,
 * Cluster), and once its session event has left Redis for every subscriber.
 */
import type { Redis } from 'ioredis';
import { GatewayError } from '../errors.js';
import { attempt } from './redis-attempt.js';
import { commandTimeoutOf } from './redis-connection.js';
import type { RedisConnectionOptions } from './redis-connection.js';
import type { RedisTopology } from './redis-topology.js';

/**
 * With Sentinel or Cluster, a write is acknowledged only once a replica has it (`WAIT`):
 * replication is asynchronous, and a master that dies right after a logout
 * or password change would otherwise take it along, letting the old token
 * back in on the promoted replica. No replica within the time:
 * `unavailable` — the change is on the master, a retry is harmless. A single
 * Redis (`url`) has nothing to fail over to, so nothing to wait for.
 */
export function replicatedWrites(
  topology: RedisTopology,
  options: RedisConnectionOptions,
): (key: string) => Promise<void> {
  if (options.sentinel === undefined && options.cluster === undefined) return async () => {};
  const waitMs = Math.max(25, Math.floor(commandTimeoutOf(options) / 2));
  return async (key) => {
    // WAIT counts the replicas of the node it is sent to: the one that took the write.
    const acknowledged = await attempt(async () => {
      const node = await topology.nodeFor(key);
      if (node === undefined) throw new Error('no master known for the key');
      return node.wait(1, waitMs);
    });
    if (acknowledged < 1) {
      throw new GatewayError('unavailable', 'The store could not confirm the change; retry.');
    }
  };
}

/**
 * Resolves once Redis has written a just-published session event to every
 * subscriber's connection. Redis queues the script's reply and the PUBLISH's
 * messages in one pass of its event loop and may write the reply first: if it
 * is descheduled in between (a busy machine), the caller can answer 204 and
 * its client reach another instance before that instance's copy has left
 * Redis — the multi-instance test once saw the old token accepted that way,
 * with the suite loading both cores. A keyed read (`EXISTS`, routed on Cluster
 * to the master that ran the script) sent after the reply has been read
 * is served in a later pass, after every write of that one; an instance then
 * reads the event before any request sent after the 204 reaches it (on one
 * host; over a network, within the event's own trip). A failed read changes
 * nothing: the change is stored, and a subscriber whose connection broke
 * stops trusting its cache by itself.
 */
export async function fannedOut(redis: Redis, key: string): Promise<void> {
  // Keyed, so that on Cluster it reaches the master that ran the script.
  await redis.exists(key).catch(() => undefined);
}
