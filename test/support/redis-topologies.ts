/**
 * Real Redis Sentinel and Redis Cluster setups for tests (issue 14), made of
 * throw-away `redis-server` processes on free ports of 127.0.0.1, each in a
 * temp directory of its own, nothing persisted. Timeouts are set low so that
 * a failover takes about a second or two instead of Redis's default 30 s.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { findFreeServerPort } from './ports.js';
import { startRedisProcess, unpersisted, type RedisProcess } from './redis-server.js';

const run = promisify(execFile);

/**
 * A master, two replicas and three sentinels watching them: after a
 * failover one replica is left, so writes that wait for a replica go on.
 */
export interface TestSentinelSet {
  /** The master group's name (`store.redis.sentinel.name`). */
  name: string;
  /** `host:port` of the sentinels (`store.redis.sentinel.nodes`). */
  sentinels: string[];
  /** Port of the node the sentinels call master now. */
  masterPort(): Promise<number>;
  /** The replicas as started (one of them is master after a failover). */
  replicas: RedisProcess[];
  /** SIGKILLs the current master; resolves once the sentinels have promoted the replica. */
  killMaster(): Promise<{ oldPort: number; newPort: number }>;
  stop(): Promise<void>;
}

const SENTINEL_NAME = 'tgmaster';
const DOWN_AFTER_MS = 400;

export async function startSentinelSet(): Promise<TestSentinelSet> {
  const dir = mkdtempSync(join(tmpdir(), 'tg-sentinel-'));
  const processes: RedisProcess[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(processes.map((p) => p.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const [masterPort, replicaPort, secondReplicaPort] = [
      await findFreeServerPort(),
      await findFreeServerPort(),
      await findFreeServerPort(),
    ];
    const data = (port: number, extra: string[] = []) => nodeArgs(port, dir, extra);
    const nodes = new Map<number, RedisProcess>();
    for (const [port, extra] of [
      [masterPort, []],
      [replicaPort, ['--replicaof', '127.0.0.1', String(masterPort)]],
      [secondReplicaPort, ['--replicaof', '127.0.0.1', String(masterPort)]],
    ] as const) {
      const node = await startRedisProcess(port, data(port, [...extra]));
      processes.push(node);
      nodes.set(port, node);
    }
    for (const port of [replicaPort, secondReplicaPort]) {
      await waitFor(async () =>
        (await info(port, 'replication')).includes('master_link_status:up'),
      );
    }
    const sentinels: string[] = [];
    for (let i = 0; i < 3; i++) {
      const port = await findFreeServerPort();
      const file = join(dir, `sentinel-${port}.conf`);
      writeFileSync(
        file,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${SENTINEL_NAME} 127.0.0.1 ${masterPort} 2`,
          `sentinel down-after-milliseconds ${SENTINEL_NAME} ${DOWN_AFTER_MS}`,
          `sentinel failover-timeout ${SENTINEL_NAME} 2000`,
          `sentinel parallel-syncs ${SENTINEL_NAME} 1`,
          '',
        ].join('\n'),
      );
      processes.push(await startRedisProcess(port, [file, '--sentinel'], 'Sentinel ID is'));
      sentinels.push(`127.0.0.1:${port}`);
    }
    const firstSentinel = Number((sentinels[0] as string).split(':')[1]);
    const masterPortNow = async (): Promise<number> => {
      const client = new Redis({ port: firstSentinel, host: '127.0.0.1', lazyConnect: true });
      try {
        await client.connect();
        const addr = (await client.call('SENTINEL', 'get-master-addr-by-name', SENTINEL_NAME)) as [
          string,
          string,
        ];
        return Number(addr[1]);
      } finally {
        client.disconnect();
      }
    };
    // Every sentinel must know the others before a failover can reach quorum.
    await waitFor(async () => {
      const client = new Redis({ port: firstSentinel, host: '127.0.0.1', lazyConnect: true });
      try {
        await client.connect();
        const master = (await client.call('SENTINEL', 'master', SENTINEL_NAME)) as string[];
        const field = (name: string) => master[master.indexOf(name) + 1];
        return field('num-other-sentinels') === '2' && field('num-slaves') === '2';
      } finally {
        client.disconnect();
      }
    });
    return {
      name: SENTINEL_NAME,
      sentinels,
      replicas: [replicaPort, secondReplicaPort].map((port) => nodes.get(port) as RedisProcess),
      masterPort: masterPortNow,
      async killMaster() {
        const oldPort = await masterPortNow();
        await nodes.get(oldPort)?.kill();
        let newPort = oldPort;
        await waitFor(async () => {
          newPort = await masterPortNow();
          return newPort !== oldPort;
        }, 15_000);
        return { oldPort, newPort };
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Three masters with two replicas each: one is left after a failover, so writes that wait for a replica go on. */
export interface TestCluster {
  /** `host:port` of every node (`store.redis.cluster.nodes`). */
  nodes: string[];
  /** Port of the master serving `key`'s slot now. */
  masterPortOf(key: string): Promise<number>;
  /** SIGKILLs the master of `key`'s slot; resolves once its replica serves the slot. */
  killMasterOf(key: string): Promise<{ oldPort: number; newPort: number }>;
  stop(): Promise<void>;
}

export async function startCluster(): Promise<TestCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'tg-cluster-'));
  const processes = new Map<number, RedisProcess>();
  const stop = async (): Promise<void> => {
    await Promise.all([...processes.values()].map((p) => p.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const ports: number[] = [];
    for (let i = 0; i < 9; i++) ports.push(await findFreeServerPort());
    await Promise.all(
      ports.map(async (port) => {
        const node = await startRedisProcess(port, [
          ...nodeArgs(port, dir),
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          `nodes-${port}.conf`,
          '--cluster-node-timeout',
          '1000',
          '--cluster-replica-validity-factor',
          '0',
        ]);
        processes.set(port, node);
      }),
    );
    await run('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((p) => `127.0.0.1:${p}`),
      '--cluster-replicas',
      '2',
      '--cluster-yes',
    ]);
    await waitFor(async () => {
      let replicasOnline = 0;
      for (const port of ports) {
        if (!(await info(port, 'cluster', 'CLUSTER', 'INFO')).includes('cluster_state:ok')) {
          return false;
        }
        const replication = await info(port, 'replication');
        replicasOnline += (replication.match(/slave\d+:[^\r\n]*state=online/g) ?? []).length;
      }
      // Every master has its replica in sync: writes can be acknowledged (WAIT).
      return replicasOnline === 6;
    }, 20_000);
    const anyLive = () => [...processes.keys()];
    const masterPortOf = async (key: string): Promise<number> => {
      for (const port of anyLive()) {
        const client = new Redis({
          port,
          host: '127.0.0.1',
          lazyConnect: true,
          maxRetriesPerRequest: 0,
        });
        try {
          await client.connect();
          const slot = (await client.call('CLUSTER', 'KEYSLOT', key)) as number;
          const shards = (await client.call('CLUSTER', 'SLOTS')) as [
            number,
            number,
            [string, number],
          ][];
          const owner = shards.find(([from, to]) => slot >= from && slot <= to);
          if (owner !== undefined) return owner[2][1];
        } catch {
          // a killed node: ask another
        } finally {
          client.disconnect();
        }
      }
      throw new Error('no cluster node answered');
    };
    return {
      nodes: ports.map((p) => `127.0.0.1:${p}`),
      masterPortOf,
      async killMasterOf(key) {
        const oldPort = await masterPortOf(key);
        await processes.get(oldPort)?.kill();
        processes.delete(oldPort);
        let newPort = oldPort;
        await waitFor(async () => {
          newPort = await masterPortOf(key);
          if (newPort === oldPort) return false;
          return (await info(newPort, 'cluster', 'CLUSTER', 'INFO')).includes('cluster_state:ok');
        }, 20_000);
        return { oldPort, newPort };
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** A data node on 127.0.0.1 that persists nothing, its files in `dir`. */
function nodeArgs(port: number, dir: string, extra: string[] = []): string[] {
  return [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    ...unpersisted(dir),
    '--dbfilename',
    `dump-${port}.rdb`,
    // A replica syncs at once (Redis waits 5 s for more replicas by default).
    '--repl-diskless-sync-delay',
    '0',
    ...extra,
  ];
}

/** `INFO section` (or another command's text reply) of one node; '' when it does not answer. */
async function info(port: number, section: string, ...command: string[]): Promise<string> {
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
  client.on('error', () => {});
  try {
    await client.connect();
    const args = command.length > 0 ? command : ['INFO', section];
    return String(await client.call(args[0] as string, ...args.slice(1)));
  } catch {
    return '';
  } finally {
    client.disconnect();
  }
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
