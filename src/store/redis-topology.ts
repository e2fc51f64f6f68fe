/**
 * What differs between one Redis (or a Sentinel master) and Redis Cluster,
 * for the store: which node holds a key, and which nodes session events can
 * be published on.
 *
 * On Cluster a script runs on the master of its keys' slot, and its PUBLISH
 * is delivered at once to that node's own subscribers, to the other nodes'
 * only later, over the cluster bus. So every instance subscribes on every
 * master (an event then arrives once per master: events are idempotent), and
 * "the event has left Redis" is asked of the node that ran the script (see
 * `fannedOut` in `redis-store.ts`).
 */
import type { Cluster, Redis } from 'ioredis';

export interface RedisTopology {
  /**
   * The master holding `key`; undefined while a cluster does not know
   * (mid-failover). On Cluster one `CLUSTER KEYSLOT` round trip: only writes
   * ask.
   */
  nodeFor(key: string): Promise<Redis | undefined>;
  /** The nodes whose publications must be heard: the client itself, or every cluster master. */
  publishers(): Redis[];
  /**
   * `host:port` of every master serving a slot now (Cluster; empty otherwise):
   * events are live only while each of them is heard, so a slot whose master
   * is dead, or promoted but not yet subscribed to, keeps caches distrusted.
   */
  slotMasters(): string[];
  /** `host:port` of a node, as `slotMasters` names them. */
  keyOf(node: Redis): string;
  /** Calls `listener` whenever the set of publishers may have changed; returns the unsubscribe. */
  onChange(listener: () => void): () => void;
}

export function redisTopology(client: Redis): RedisTopology {
  if (!isCluster(client)) {
    return {
      nodeFor: () => Promise.resolve(client),
      publishers: () => [client],
      slotMasters: () => [],
      keyOf: nodeKey,
      onChange: () => () => {},
    };
  }
  const cluster = client as unknown as Cluster;
  return {
    async nodeFor(key) {
      const slot = Number(await cluster.call('CLUSTER', 'KEYSLOT', key));
      const master = cluster.slots[slot]?.[0];
      if (master === undefined) return undefined;
      return cluster.nodes('master').find((node) => nodeKey(node) === master);
    },
    publishers: () => cluster.nodes('master'),
    slotMasters: () => [...new Set(cluster.slots.flatMap((nodes) => nodes[0] ?? []))],
    keyOf: nodeKey,
    onChange(listener) {
      const events = ['refresh', '+node', '-node'] as const;
      for (const event of events) cluster.on(event, listener);
      return () => {
        for (const event of events) cluster.off(event, listener);
      };
    },
  };
}

/** The client `connectRedis` made for `store.redis.cluster` (typed as `Redis` for its commands). */
export function isCluster(client: Redis): boolean {
  return (client as { isCluster?: boolean }).isCluster === true;
}

/** `host:port`, as `Cluster.slots` names nodes. */
function nodeKey(node: Redis): string {
  return `${node.options.host ?? ''}:${node.options.port ?? ''}`;
}
