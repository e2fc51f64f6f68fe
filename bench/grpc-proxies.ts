/**
 * The two proxies of the gRPC benchmark (issue 47), each in front of the
 * grpc-js echo upstream (`grpc-upstream.mjs`): the bare `node:http2` proxy
 * (`bare-http2-proxy.mjs`) and the built gateway with `listen.http2` and one
 * `protocol: grpc` route (bearer token, the tenant read from `x-tenant-id`
 * metadata, the default identity headers injected as metadata,
 * `authorization` stripped), on the bench's Redis and signing key.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import type { Backends, ComparedProxy } from './backends.js';
import { BENCH_DIR, findFreePort } from './processes.js';

/** The gRPC route: the echo service's own path, as a gRPC route is mounted. */
const GRPC_PREFIX = '/test.echo.Echo';

export async function grpcProxies(backends: Backends): Promise<ComparedProxy[]> {
  const barePort = await findFreePort();
  const gatewayPort = await findFreePort();
  return [
    {
      name: 'bare http2 proxy',
      port: barePort,
      nodeArgs: [join(BENCH_DIR, 'bare-http2-proxy.mjs'), String(barePort), backends.upstreamUrl],
    },
    {
      name: 'gateway',
      port: gatewayPort,
      nodeArgs: ['dist/cli.js', 'serve', '--config', writeGrpcConfig(backends, gatewayPort)],
    },
  ];
}

/** The bench's config with HTTP/2 on the main listener and the gRPC route; returns its path. */
function writeGrpcConfig(backends: Backends, port: number): string {
  const base = parse(readFileSync(backends.files.configFile, 'utf8')) as Record<string, unknown>;
  const config = {
    ...base,
    listen: { host: '127.0.0.1', port, http2: true },
    routes: [
      {
        prefix: GRPC_PREFIX,
        upstream: backends.upstreamUrl,
        protocol: 'grpc',
        tenant: { header: 'x-tenant-id' },
      },
    ],
  };
  const file = backends.files.configFile.replace(/\.yaml$/, '-grpc.yaml');
  writeFileSync(file, stringify(config));
  return file;
}
