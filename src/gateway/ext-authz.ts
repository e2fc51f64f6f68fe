/**
 * Envoy's gRPC ext_authz (`forwardAuth.grpc`): `envoy.service.auth.v3.Authorization`
 * served by a @grpc/grpc-js server (h2c) on `forwardAuth.host:grpcPort`,
 * from Envoy's own protos (`proto/`, loaded at start). Each `Check` is the
 * `/auth/verify` verdict (`proxy/entry-ext-authz.ts`). Its own port, not the
 * forward-auth listener's: a grpc-js server owns its HTTP/2 sessions, and
 * sharing one port would need the first bytes of each connection peeked
 * (docs/grpc.md). Each check is recorded as `/auth/verify`'s requests are
 * (metrics, access log), under the route `ext-authz`. The server
 * (`ext-authz-server.ts`) and grpc-js are loaded only when it is on.
 */
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/index.js';
import type { RequestRecorder } from '../ops/request-recorder.js';
import type { Admission } from '../proxy/decide/pipeline.js';
import { built, type Built } from './builders.js';

export interface ExtAuthz {
  /** Binds the port; resolves with its address. */
  listen(): Promise<AddressInfo>;
}

/** Undefined unless `forwardAuth.grpc`; its undo stops the server, cutting open calls. */
export async function buildExtAuthz(
  config: GatewayConfig,
  { admission, recorder }: { admission: Admission; recorder: RequestRecorder },
  log: Logger,
): Promise<Built<ExtAuthz | undefined>> {
  const at = config.forwardAuth;
  if (at === undefined || !at.grpc) return built(undefined);
  const { createExtAuthzServer } = await import('./ext-authz-server.js');
  return createExtAuthzServer(at, { admission, recorder }, log);
}
