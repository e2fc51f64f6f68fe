/**
 * The gRPC server of Envoy's ext_authz (`ext-authz.ts`): a @grpc/grpc-js
 * server (h2c) from Envoy's own protos (`proto/`, loaded at start). Its own
 * module, imported only when `forwardAuth.grpc` is on: grpc-js and the proto
 * loader take ~0.2 s of CPU to load.
 */
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as loader from '@grpc/proto-loader';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/index.js';
import { GatewayError } from '../errors.js';
import type { RequestRecorder } from '../ops/request-recorder.js';
import type { Admission } from '../proxy/decide/pipeline.js';
import { checkedRequest, checkRequest, type CheckRequest } from '../proxy/entry-ext-authz.js';
import { built, type Built } from './builders.js';
import type { ExtAuthz } from './ext-authz.js';

/** `proto/` beside `src/` and `dist/`. */
const PROTO_DIR = fileURLToPath(new URL('../../proto/', import.meta.url));
const SERVICE_FILE = 'envoy/service/auth/v3/external_auth.proto';

/** The server on `at.host:grpcPort`; its undo stops it, cutting open calls. */
export function createExtAuthzServer(
  at: NonNullable<GatewayConfig['forwardAuth']>,
  { admission, recorder }: { admission: Admission; recorder: RequestRecorder },
  log: Logger,
): Built<ExtAuthz> {
  const server = new grpc.Server();
  server.addService(authorizationService(), {
    Check(call: grpc.ServerUnaryCall<CheckRequest, unknown>, answer: grpc.sendUnaryData<unknown>) {
      // Recorded as `/auth/verify`'s requests are (metrics, access log), under the route `ext-authz`.
      const req = checkedRequest(call.request);
      const scope = recorder.openCheck(req);
      checkRequest(admission, req, scope).then(
        (response) => {
          scope.end(response.denied_response?.status.code ?? 200);
          answer(null, response);
        },
        (err: unknown) => {
          // checkRequest answers every refusal itself: this is a bug, and a denial.
          log.error({ err }, 'ext_authz check failed');
          scope.refusal = { code: 'internal_error' };
          scope.end(500);
          answer({ code: grpc.status.INTERNAL, details: 'internal_error' });
        },
      );
    },
  });
  const listen = () =>
    new Promise<AddressInfo>((resolve, reject) => {
      const where = `${at.host}:${at.grpcPort}`;
      server.bindAsync(where, grpc.ServerCredentials.createInsecure(), (err, port) => {
        if (err !== null) {
          reject(
            new GatewayError('unavailable', `Cannot listen on ${where} (forwardAuth.grpcPort).`, {
              cause: err,
            }),
          );
          return;
        }
        resolve({ address: at.host, family: at.host.includes(':') ? 'IPv6' : 'IPv4', port });
      });
    });
  return built({ listen }, async () => {
    server.forceShutdown();
  });
}

function authorizationService(): grpc.ServiceDefinition {
  const definition = loader.loadSync(SERVICE_FILE, {
    includeDirs: [PROTO_DIR],
    keepCase: true,
    longs: Number,
    enums: String,
    defaults: false,
    oneofs: true,
  });
  const loaded = grpc.loadPackageDefinition(definition) as unknown as {
    envoy: { service: { auth: { v3: { Authorization: grpc.ServiceClientConstructor } } } };
  };
  return loaded.envoy.service.auth.v3.Authorization.service;
}
