/**
 * Where the gateway listens: the main listener, the admin listener of the
 * operations endpoints, forward-auth's own listener, and the rule that no two
 * of them share a port.
 */
import { z } from 'zod';
import { boolean, hostName, port } from './values.js';

export const listen = z
  .strictObject({
    host: hostName().default('0.0.0.0').describe('address the main listener binds to'),
    port: port().default(8080).describe('port of the main listener (0: any free port)'),
    // Off by default: on the public port they would answer anyone and
    // shadow an upstream's own /healthz or /metrics (issue 30).
    opsEndpoints: boolean()
      .default(false)
      .describe(
        'also answer `/healthz`, `/readyz` and `/metrics` here, for a platform that can probe only the serving port; anyone who reaches this listener then reads the metrics, and a route whose prefix is one of those paths is refused. Off: they are served on `admin` only',
      ),
    http2: boolean()
      .default(false)
      .describe(
        'also speak HTTP/2 on this port: `h2` by ALPN with `tls`, `h2c` by prior knowledge without; HTTP/1.1 is still served, `Upgrade: h2c` is refused ([HTTP/2](http2.md))',
      ),
    tls: z
      .strictObject({
        cert: z
          .string()
          .min(1)
          .describe(
            'PEM file of the certificate chain (relative to the config file); re-read on every reload',
          ),
        key: z
          .string()
          .min(1)
          .describe(
            "PEM file of the certificate's private key (relative to the config file); re-read on every reload",
          ),
      })
      .optional()
      .describe(
        'serve this listener over TLS; a reload (SIGHUP) re-reads both files and keeps the old pair when the new one cannot be used. Omitted: cleartext',
      ),
  })
  .meta({
    description:
      'The main listener: the proxied routes and the identity API (`/1/…`, `/.well-known/…`).',
    examples: [{ host: '0.0.0.0', port: 8080 }],
  })
  .prefault({});

export const admin = z
  .strictObject({
    host: hostName().default('0.0.0.0').describe('address the admin listener binds to'),
    port: port().default(9090).describe('port of the admin listener'),
    configReload: boolean()
      .default(false)
      .describe('allow `POST /config/reload` on the admin listener'),
  })
  .meta({
    description:
      'Admin listener for `/healthz`, `/readyz`, `/metrics` (and `POST /config/reload`): keep it off the public network. Omitted: they are not served at all — never on `listen`, unless `listen.opsEndpoints` asks for it.',
    examples: [{ host: '0.0.0.0', port: 9090, configReload: true }],
  })
  .optional();

export const forwardAuth = z
  .strictObject({
    host: hostName().default('0.0.0.0').describe('address the forward-auth listener binds to'),
    port: port().default(8081).describe('port of the forward-auth listener'),
    grpc: boolean()
      .default(false)
      .describe(
        "also answer Envoy's gRPC ext_authz (`envoy.service.auth.v3.Authorization/Check`, h2c) on `grpcPort`, the same verdict as `/auth/verify` ([gRPC](grpc.md#envoys-grpc-ext_authz))",
      ),
    grpcPort: port()
      .default(8082)
      .describe('port of the gRPC ext_authz listener (on `host`), with `grpc: true`'),
  })
  .meta({
    description:
      'A listener of its own for `/auth/verify` (then the main listener does not serve it), so a NetworkPolicy can let only the ingress controller reach it. Omitted: `/auth/verify` is served on `listen`.',
    examples: [{ port: 8081 }],
  })
  .optional();

const ANY_ADDRESS = new Set(['0.0.0.0', '::', '[::]']);

/**
 * Two listeners on one port would fail at start (EADDRINUSE) after `config
 * check` said ok. Reads the whole config (`listen`, `admin`, `forwardAuth`),
 * which may be partly invalid.
 */
export function checkListeners(config: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const seen: { key: string; host: string; port: number }[] = [];
  for (const key of ['listen', 'admin', 'forwardAuth', 'forwardAuth.grpcPort']) {
    const { host, port } = listenerAt(config, key);
    if (typeof host !== 'string' || typeof port !== 'number' || port === 0) continue;
    const clash = seen.find(
      (other) =>
        other.port === port &&
        (other.host === host || ANY_ADDRESS.has(other.host) || ANY_ADDRESS.has(host)),
    );
    if (clash !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: key === 'forwardAuth.grpcPort' ? ['forwardAuth', 'grpcPort'] : [key, 'port'],
        message: `is ${clash.key.includes('.') ? clash.key : `${clash.key}.port`} too (${port}): each listener needs a port of its own`,
      });
    }
    seen.push({ key, host, port });
  }
}

/** Where a listener binds: `forwardAuth.grpcPort` is the ext_authz listener, when `forwardAuth.grpc`. */
function listenerAt(
  config: Record<string, unknown>,
  key: string,
): { host?: unknown; port?: unknown } {
  if (key !== 'forwardAuth.grpcPort')
    return (config[key] ?? {}) as { host?: unknown; port?: unknown };
  const auth = (config['forwardAuth'] ?? {}) as {
    host?: unknown;
    grpc?: unknown;
    grpcPort?: unknown;
  };
  return auth.grpc === true ? { host: auth.host, port: auth.grpcPort } : {};
}
