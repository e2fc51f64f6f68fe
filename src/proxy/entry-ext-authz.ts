/**
 * The Envoy gRPC ext_authz entry way (`envoy.service.auth.v3.Authorization/Check`):
 * the admission pipeline's verdict (`decide/pipeline.ts`) on the request
 * Envoy asks about, answered as a `CheckResponse`. It decides nothing itself.
 *
 * Envoy's `CheckRequest` carries the original request in
 * `attributes.request.http` (method, path with its query, host, headers
 * lower-cased, scheme). It is read exactly as Envoy's HTTP ext_authz mode
 * reaches `/auth/verify`: the original path appended to `/auth/verify`, the
 * original method and Host, the original headers — so both modes give one
 * verdict, and a client's own `X-Original-*` headers count as they do there.
 *
 * Allowed: `status` OK and an `OkHttpResponse` setting the identity headers
 * and removing every client copy (`headers_to_remove`). Refused:
 * `status` UNAUTHENTICATED / PERMISSION_DENIED / … (the gRPC mapping of the
 * HTTP status) and a `DeniedHttpResponse` with the HTTP status, headers
 * and JSON body `/auth/verify` answers.
 */
import type { IncomingMessage } from 'node:http';
import { errorResponse, isGatewayError } from '../errors.js';
import { GRPC_STATUS, grpcStatusOf } from '../http/grpc-refusal.js';
import type { Refusal } from '../http/scope.js';
import type { Who } from './decide/admit.js';
import { normaliseTarget } from './decide/normalise-path.js';
import { decide, mutationForEnvoy, type Admission } from './decide/pipeline.js';
import { FORWARD_AUTH_PATH } from './decide/verify-request.js';

/** `AttributeContext.HttpRequest`, the fields read (proto-loader, `keepCase`). */
export interface EnvoyHttpRequest {
  method?: string;
  path?: string;
  host?: string;
  scheme?: string;
  headers?: Record<string, string>;
}

export interface CheckRequest {
  attributes?: {
    request?: { http?: EnvoyHttpRequest };
    source?: { address?: { socket_address?: { address?: string } } };
  };
}

/** `config.core.v3.HeaderValueOption`: set, overwriting what the request has. */
interface HeaderValueOption {
  header: { key: string; value: string };
  append_action: 'OVERWRITE_IF_EXISTS_OR_ADD';
}

export interface CheckResponse {
  status: { code: number; message: string };
  ok_response?: { headers: HeaderValueOption[]; headers_to_remove: string[] };
  denied_response?: { status: { code: number }; headers: HeaderValueOption[]; body: string };
}

/** The body's own framing headers: Envoy frames the denied answer itself. */
const NOT_ANSWERED = new Set(['content-length']);

/**
 * The verdict on one `CheckRequest`, `req` its {@link checkedRequest}; `who`
 * takes the principal as soon as it is known, and the refusal if any (the
 * check's record: `ops/request-recorder.ts`).
 */
export async function checkRequest(
  deps: Admission,
  req: IncomingMessage,
  who: Who & { refusal?: Refusal },
): Promise<CheckResponse> {
  try {
    const target = normaliseTarget(req.url as string);
    const principal = await decide(deps, req, target, who);
    const { set, remove } = mutationForEnvoy(
      deps.settings.headers,
      principal,
      req.headers as Record<string, string>,
    );
    return {
      status: { code: GRPC_STATUS.OK, message: '' },
      ok_response: { headers: options(set), headers_to_remove: remove },
    };
  } catch (err) {
    const rendered = errorResponse(err);
    who.refusal = { code: rendered.code, detail: isGatewayError(err) ? err.detail : undefined };
    const answered = Object.fromEntries(
      Object.entries(rendered.headers).filter(([name]) => !NOT_ANSWERED.has(name)),
    );
    return {
      status: { code: grpcStatusOf(rendered.status), message: rendered.code },
      denied_response: {
        status: { code: rendered.status },
        headers: options(answered),
        body: rendered.body,
      },
    };
  }
}

/** The check as the request Envoy's HTTP mode sends to `/auth/verify`. */
export function checkedRequest(check: CheckRequest): IncomingMessage {
  const http = check.attributes?.request?.http ?? {};
  return asVerifyRequest(http, originalHeaders(http), check);
}

/** The original request's headers, lower-cased, without HTTP/2 pseudo-headers; Host is `host`. */
function originalHeaders(http: EnvoyHttpRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(http.headers ?? {})) {
    const lower = name.toLowerCase();
    // No body comes with a check: its framing says nothing here.
    if (lower.startsWith(':') || lower === 'content-length' || lower === 'transfer-encoding')
      continue;
    out[lower] = value;
  }
  if (http.host !== undefined && http.host !== '') out.host = http.host;
  return out;
}

/** The check as the request Envoy's HTTP mode sends to `/auth/verify`. */
function asVerifyRequest(
  http: EnvoyHttpRequest,
  headers: Record<string, string>,
  check: CheckRequest,
): IncomingMessage {
  const path = http.path !== undefined && http.path.startsWith('/') ? http.path : '/';
  return {
    method: (http.method ?? 'GET').toUpperCase(),
    url: FORWARD_AUTH_PATH + path,
    headers,
    rawHeaders: Object.entries(headers).flat(),
    httpVersionMajor: 1,
    httpVersionMinor: 1,
    socket: { remoteAddress: check.attributes?.source?.address?.socket_address?.address },
  } as unknown as IncomingMessage;
}

function options(headers: Record<string, string>): HeaderValueOption[] {
  return Object.entries(headers).map(([key, value]) => ({
    header: { key, value },
    append_action: 'OVERWRITE_IF_EXISTS_OR_ADD',
  }));
}
