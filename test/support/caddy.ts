/**
 * A private, throw-away Caddy for forward-auth tests: `caddy run` on a
 * Caddyfile whose one site listens on a free port of 127.0.0.1, with its
 * admin endpoint off (two tests must not fight over :2019) and its data and
 * config directories in a temporary directory of its own.
 *
 * Without the binary the start fails rather than skipping: CI installs Caddy,
 * so a missing one is a broken machine, not an optional feature.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ownedServer, stopChild, untilServing, watchOutput } from './child-processes.js';
import { findExecutable, onPath } from './executables.js';
import { startOnFreePort } from './start-on-free-port.js';

export interface TestCaddy {
  /** The port the site listens on, on 127.0.0.1. */
  port: number;
  /** Stops Caddy (SIGTERM, then SIGKILL), waits for the exit and removes its directory. */
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;

/**
 * Starts Caddy with `siteBody` as the contents of its one site block (the
 * helper supplies the address), and resolves once the site accepts
 * connections.
 *
 * @throws Error `caddy not found: ...` when no caddy binary exists.
 */
export async function startCaddy(siteBody: string): Promise<TestCaddy> {
  const binary = findExecutable(onPath('caddy'));
  if (binary === undefined)
    throw new Error('caddy not found: apt-get install caddy (CI installs it)');
  return startOnFreePort('caddy', (dir, port) => spawnCaddy(binary, dir, port, siteBody));
}

async function spawnCaddy(
  binary: string,
  dir: string,
  port: number,
  siteBody: string,
): Promise<TestCaddy> {
  const caddyfile = join(dir, 'Caddyfile');
  const pidFile = join(dir, 'caddy.pid');
  writeFileSync(caddyfile, `{\n\tadmin off\n}\nhttp://127.0.0.1:${port} {\n${siteBody}\n}\n`);
  const child = spawn(
    binary,
    ['run', '--config', caddyfile, '--adapter', 'caddyfile', '--pidfile', pidFile],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '',
        HOME: dir,
        XDG_DATA_HOME: join(dir, 'data'),
        XDG_CONFIG_HOME: join(dir, 'config'),
      },
    },
  );
  const output = watchOutput(child);
  // Caddy writes its pid file once its config has loaded and its site is bound.
  if (await untilServing(child, pidFile, port, START_TIMEOUT_MS)) {
    return { port, stop: ownedServer(child, dir, STOP_TIMEOUT_MS) };
  }
  await stopChild(child, STOP_TIMEOUT_MS);
  throw new Error(`caddy did not start on port ${port}:\n${output()}`);
}
