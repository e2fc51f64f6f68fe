/**
 * Starting a server that binds a port it is told: the free port is found by
 * binding port 0 and letting it go, so another process can take it in
 * between; a few ports are tried before giving up.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findFreePort } from './ports.js';

/**
 * `start(dir, port)` with a fresh directory `tg-<name>-…` and a free port,
 * tried up to `attempts` times; a failed try's directory is removed, the last
 * failure thrown.
 */
export async function startOnFreePort<T>(
  name: string,
  start: (dir: string, port: number) => Promise<T>,
  attempts = 3,
): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    const dir = mkdtempSync(join(tmpdir(), `tg-${name}-`));
    const port = await findFreePort();
    try {
      return await start(dir, port);
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      if (attempt >= attempts) throw err;
    }
  }
}
