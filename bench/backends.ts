/**
 * What the one-target-at-a-time bench tools (profile.ts, instructions.ts)
 * start from: a private redis-server, the upstream, the gateway's files, the
 * request every proxy gets — a bearer token from a gateway started once for
 * it, and the tenant header — as in `npm run bench`, and the proxies they
 * compare.
 */
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { startRedisServer } from '../test/support/redis-server.js';
import {
  BENCH_TENANT,
  fetchToken,
  writeGatewayFiles,
  type GatewayFiles,
} from './gateway-config.js';
import { BENCH_DIR, findFreePort, PROJECT_ROOT, spawnNode, waitForPort } from './processes.js';

export interface Backends {
  upstreamUrl: string;
  /** The port the gateway's config listens on (every gateway of the run uses the same files). */
  gatewayPort: number;
  files: GatewayFiles;
  /** The proxied request's headers: `Authorization: Bearer …` and `X-Tenant-Id`. */
  headers: Record<string, string>;
}

/** One of the proxies the tools compare: node's arguments (after any node flags) and its port. */
export interface ComparedProxy {
  name: string;
  port: number;
  nodeArgs: string[];
  /** The path it is asked for, when not the bench's (`REQUEST_PATH`). */
  path?: string;
  /** Its request's headers, when not the bench's (`Backends.headers`). */
  headers?: Record<string, string>;
}

/**
 * Bare http-proxy-3 (the old core), bare undici (the current core) and the
 * gateway, in that order,
 * each on a port of its own (a process may be started again on it once the
 * one before has stopped).
 */
export async function comparedProxies(backends: Backends): Promise<ComparedProxy[]> {
  const helper = async (name: string, script: string): Promise<ComparedProxy> => {
    const port = await findFreePort();
    return { name, port, nodeArgs: [join(BENCH_DIR, script), String(port), backends.upstreamUrl] };
  };
  return [
    await helper('bare http-proxy-3', 'bare-proxy.mjs'),
    await helper('bare undici', 'bare-undici.mjs'),
    {
      name: 'gateway',
      port: backends.gatewayPort,
      nodeArgs: ['dist/cli.js', 'serve', '--config', backends.files.configFile],
    },
  ];
}

/**
 * Starts them; every process and file is registered with `teardown`. The
 * upstream is `upstream.mjs` (HTTP/1.1) unless `upstreamScript` names
 * another helper of this directory taking the same argument, its port.
 */
export async function startBackends(
  teardown: { add(fn: () => unknown): void },
  upstreamScript = 'upstream.mjs',
): Promise<Backends> {
  const redis = await startRedisServer();
  teardown.add(() => redis.stop());
  const upstreamPort = await findFreePort();
  const upstream = spawnNode(
    'upstream',
    [join(BENCH_DIR, upstreamScript), String(upstreamPort)],
    PROJECT_ROOT,
  );
  teardown.add(() => upstream.stop());
  await waitForPort(upstream, upstreamPort);
  const upstreamUrl = `http://127.0.0.1:${upstreamPort}`;
  // One config and one signing key for every gateway process: the token stays good.
  const gatewayPort = await findFreePort();
  const files = writeGatewayFiles({
    port: gatewayPort,
    redisUrl: redis.url,
    upstream: upstreamUrl,
  });
  teardown.add(() => rmSync(files.dir, { recursive: true, force: true }));

  const tokenGateway = spawnNode(
    'gateway',
    ['dist/cli.js', 'serve', '--config', files.configFile],
    PROJECT_ROOT,
  );
  teardown.add(() => tokenGateway.stop());
  await waitForPort(tokenGateway, gatewayPort, 30_000);
  const headers = {
    authorization: `Bearer ${await fetchToken(`http://127.0.0.1:${gatewayPort}`)}`,
    'x-tenant-id': BENCH_TENANT,
  };
  await tokenGateway.stop();
  return { upstreamUrl, gatewayPort, files, headers };
}
