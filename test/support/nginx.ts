/**
 * A private, throw-away nginx for ingress tests: one process in the foreground
 * (`daemon off; master_process off;`), its own prefix directory holding the
 * config, pid file, logs and temp directories, listening on a free port of
 * 127.0.0.1. An nginx somebody else runs (the Debian service on port 80) is
 * never touched.
 *
 * Without the binary the start fails rather than skipping: CI installs nginx,
 * so a missing one is a broken machine, not an optional feature.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ownedServer, stopChild, untilServing, watchOutput } from './child-processes.js';
import { findExecutable, onPath } from './executables.js';
import { startOnFreePort } from './start-on-free-port.js';

export interface TestNginx {
  /** The port nginx listens on, on 127.0.0.1. */
  port: number;
  /** Stops nginx (SIGTERM, then SIGKILL), waits for the exit and removes its directory. */
  stop(): Promise<void>;
  /** The error log so far: attach it to a failing assertion to see why nginx answered as it did. */
  errorLog(): string;
}

const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;
/** Where Debian and most distributions put the binary, often outside a non-root PATH. */
const WELL_KNOWN_BINARIES = [
  '/usr/sbin/nginx',
  '/usr/local/sbin/nginx',
  '/usr/local/nginx/sbin/nginx',
];

/**
 * Starts nginx with `serverBody` as the contents of its one `server { }`
 * block (the helper supplies `listen`), and resolves once nginx has bound the
 * port and accepts connections.
 *
 * @throws Error `nginx not found: ...` when no nginx binary exists.
 */
export async function startNginx(serverBody: string): Promise<TestNginx> {
  const binary = findExecutable([...onPath('nginx'), ...WELL_KNOWN_BINARIES]);
  if (binary === undefined) {
    throw new Error('nginx not found: apt-get install nginx (CI installs it)');
  }
  return startOnFreePort('nginx', (dir, port) => spawnNginx(binary, dir, port, serverBody));
}

function configFor(dir: string, port: number, serverBody: string): string {
  const temp = (name: string) => `${name}_temp_path ${join(dir, `${name}-temp`)};`;
  return `
# As root, nginx hands its temp directories (and any worker) to "nobody"; keep them root's.
${process.getuid?.() === 0 ? 'user root;' : ''}
daemon off;
master_process off;
worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} info;
events { worker_connections 128; }
http {
  access_log ${join(dir, 'access.log')};
  default_type application/octet-stream;
  ${temp('client_body')}
  ${temp('proxy')}
  ${temp('fastcgi')}
  ${temp('uwsgi')}
  ${temp('scgi')}
  server {
    listen 127.0.0.1:${port};
${serverBody}
  }
}
`;
}

async function spawnNginx(
  binary: string,
  dir: string,
  port: number,
  serverBody: string,
): Promise<TestNginx> {
  const confFile = join(dir, 'nginx.conf');
  const errorLogFile = join(dir, 'error.log');
  const pidFile = join(dir, 'nginx.pid');
  writeFileSync(confFile, configFor(dir, port, serverBody));
  // `-e` overrides the compiled-in error log, which nginx opens before it reads the config.
  const child = spawn(binary, ['-p', dir, '-c', confFile, '-e', errorLogFile], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = watchOutput(child);
  const errorLog = (): string =>
    existsSync(errorLogFile) ? readFileSync(errorLogFile, 'utf8') : '';
  // nginx writes its pid file only after it has bound every listen socket.
  if (await untilServing(child, pidFile, port, START_TIMEOUT_MS)) {
    return { port, errorLog, stop: ownedServer(child, dir, STOP_TIMEOUT_MS) };
  }
  await stopChild(child, STOP_TIMEOUT_MS);
  throw new Error(`nginx did not start on port ${port}:\n${output()}\n${errorLog()}`);
}
