/**
 * A private, throw-away redis-server for tests: its own port, its own empty
 * directory, no persistence. Tests may write anything to it and kill it; a
 * Redis somebody else uses is never touched (nothing here flushes).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanUpAtExit } from './child-processes.js';
import { findExecutable, onPath } from './executables.js';
import { findFreePort } from './ports.js';

export interface TestRedisServer {
  /** `redis://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** SIGTERM, waits for the exit and removes the data directory. */
  stop(): Promise<void>;
  /** SIGKILL, for fault tests: clients see the connection drop. */
  kill(): Promise<void>;
  /** Starts the server again on the same port (empty: nothing is persisted). */
  restart(): Promise<void>;
}

const START_TIMEOUT_MS = 10_000;
const START_ATTEMPTS = 3;

/**
 * Starts a redis-server on a free port of 127.0.0.1 and resolves once it
 * answers PING. Without the binary, falls back to `REDIS_URL` (a Redis the
 * caller owns), on which `stop`, `kill` and `restart` throw.
 */
export async function startRedisServer(
  options: {
    /**
     * Keep an append-only file fsynced on every write, so `kill` + `restart`
     * loses nothing acknowledged (a production Redis's restart; the soak).
     */
    persistent?: boolean;
  } = {},
): Promise<TestRedisServer> {
  const binary = findExecutable(onPath('redis-server'));
  if (binary === undefined) {
    const url = process.env['REDIS_URL'];
    if (url === undefined || url === '') {
      throw new Error(
        'redis-server not found: install it (Debian: apt-get install redis-server) or set REDIS_URL to a Redis you own',
      );
    }
    return externalServer(url);
  }
  const dir = mkdtempSync(join(tmpdir(), 'tg-redis-'));
  // The free port is found by binding port 0 and letting it go, so another
  // process can take it in between: try a few ports before giving up.
  for (let attempt = 1; ; attempt += 1) {
    const port = await findFreePort();
    try {
      return await managedServer(binary, port, dir, options.persistent === true);
    } catch (err) {
      if (attempt >= START_ATTEMPTS) {
        rmSync(dir, { recursive: true, force: true });
        throw err;
      }
    }
  }
}

async function managedServer(
  binary: string,
  port: number,
  dir: string,
  persistent: boolean,
): Promise<TestRedisServer> {
  const args = persistent ? serverArgs(port, dir, true) : undefined;
  let child = await spawnRedis(binary, port, dir, args);
  // A test process that dies without calling stop() must not leave its Redis behind.
  const forget = cleanUpAtExit(() => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop() {
      await terminate(child, 'SIGTERM');
      forget();
      rmSync(dir, { recursive: true, force: true });
    },
    async kill() {
      await terminate(child, 'SIGKILL');
    },
    async restart() {
      await terminate(child, 'SIGTERM');
      child = await spawnRedis(binary, port, dir, args);
    },
  };
}

function externalServer(url: string): TestRedisServer {
  const unavailable = (): Promise<void> =>
    Promise.reject(new Error('not available with REDIS_URL'));
  return {
    url,
    port: Number(new URL(url).port || 6379),
    stop: unavailable,
    kill: unavailable,
    restart: unavailable,
  };
}

/** A server on `port` in `dir`, saving no snapshots; `durable`: an append-only file synced on every write. */
function serverArgs(port: number, dir: string, durable: boolean): string[] {
  const base = ['--save', '', '--port', String(port), '--bind', '127.0.0.1', '--dir', dir];
  const appendOnly = durable ? ['yes', '--appendfsync', 'always'] : ['no'];
  return [...base, '--appendonly', ...appendOnly];
}

/** One redis-server process of a topology (a Sentinel set, a Cluster): see `redis-topologies.ts`. */
export interface RedisProcess {
  port: number;
  /** SIGKILL, for fault tests. */
  kill(): Promise<void>;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>;
  /** SIGSTOP / SIGCONT: a node that hangs without closing its connections. */
  pause(): void;
  resume(): void;
}

/**
 * Starts `redis-server` with `args` (which must set `--port port` or a config
 * file saying so) and resolves once it has printed `marker` and answers PING.
 */
export async function startRedisProcess(
  port: number,
  args: string[],
  marker = 'Ready to accept connections',
  /** Off for a TLS-only server, which a plain PING cannot reach. */
  ping = true,
): Promise<RedisProcess> {
  const binary = findExecutable(onPath('redis-server'));
  if (binary === undefined)
    throw new Error('redis-server not found (Debian: apt-get install redis-server)');
  const child = await spawnRedis(binary, port, '', args, marker, ping);
  const forget = cleanUpAtExit(() => void child.kill('SIGKILL'));
  return {
    port,
    kill: () => terminate(child, 'SIGKILL'),
    async stop() {
      child.kill('SIGCONT');
      await terminate(child, 'SIGTERM');
      forget();
    },
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
  };
}

async function spawnRedis(
  binary: string,
  port: number,
  dir: string,
  args: string[] = serverArgs(port, dir, false),
  marker = 'Ready to accept connections',
  ping = true,
): Promise<ChildProcess> {
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  // Only this child prints the marker: a PING alone could be answered by
  // another server that took the port first.
  let ready = false;
  const collect = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-4000);
    ready ||= output.includes(marker);
  };
  // The listeners stay for the child's life: they keep the pipes drained.
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  child.once('error', (err) => {
    collect(Buffer.from(String(err)));
  });

  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exited || child.exitCode !== null) break;
    if (ready && (!ping || (await answersPing(port)))) return child;
    await sleep(50);
  }
  await terminate(child, 'SIGKILL');
  throw new Error(`redis-server did not start on port ${port}:\n${output}`);
}

/** One raw PING over a fresh socket: no client library, no reconnect logic. */
function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let reply = '';
    const finish = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => finish(false));
    socket.once('error', () => finish(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) finish(reply.startsWith('+PONG'));
    });
  });
}

function terminate(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
    child.kill(signal);
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The arguments of a redis-server that keeps nothing on disk, working in `dir`. */
export function unpersisted(dir: string): string[] {
  return ['--save', '', '--appendonly', 'no', '--dir', dir];
}
