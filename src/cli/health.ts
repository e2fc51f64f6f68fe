/**
 * `health`: asks a running gateway's `/healthz` on the listener its config
 * names for it (`admin`; `listen` only with `listen.opsEndpoints`), for a
 * container HEALTHCHECK or an exec probe. Exit 0 when it answers 200; else a
 * one-line reason and exit 1.
 */
import type { LoadedConfig } from '../config/index.js';
import { cliIo } from './io.js';
import { UsageError } from './usage-error.js';

const TIMEOUT_MS = 3000;

/**
 * The URL of `/healthz`: a wildcard bind address is asked on loopback.
 * @throws UsageError when the config serves `/healthz` nowhere it could name
 */
export function healthUrl(loaded: LoadedConfig): string {
  const { admin, listen } = loaded.config;
  const key = admin !== undefined ? 'admin' : listen.opsEndpoints ? 'listen' : undefined;
  if (key === undefined) {
    throw new UsageError(
      'the config has no admin listener (`admin: { host, port }`), so no /healthz to ask: add one, or pass --url',
    );
  }
  const { host, port } = admin ?? listen;
  if (port === 0) {
    throw new UsageError(
      `${key}.port is 0 (a free port chosen at each start): pass --url with the address serve printed`,
    );
  }
  const local = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
  return `http://${local.includes(':') ? `[${local}]` : local}:${port}/healthz`;
}

export async function health(loaded: LoadedConfig, options: { url?: string }): Promise<void> {
  const url = options.url ?? healthUrl(loaded);
  let status: number;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
    await res.arrayBuffer();
    status = res.status;
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
    throw new UsageError(`unhealthy: ${url}: ${cause}`);
  }
  if (status !== 200) throw new UsageError(`unhealthy: ${url} answered ${status}`);
  cliIo().stdout.write(`ok: ${url}\n`);
}
