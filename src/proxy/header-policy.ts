/**
 * What the upstream sees (DESIGN §2 step 3): every client-supplied identity
 * header is removed first — in any letter case and in the `_` spellings that
 * upstream frameworks fold into the same name — then the verified ones are
 * injected. `X-Forwarded-*` from the client is believed only from trusted
 * proxies; the forward-auth headers a client sends carry no weight and are
 * dropped; hop-by-hop headers (and any header the client lists in
 * `Connection`) never cross the proxy.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Principal } from '../auth/authenticate.js';
import type { GatewayConfig } from '../config/index.js';
import { REQUEST_ID_HEADER } from '../request-id.js';
import { foldHeaderName } from './header-names.js';
import type { TrustCheck } from './trusted-proxies.js';

export type IdentityHeaderNames = GatewayConfig['identityHeaders'];

/** Forward-auth inputs: meaningful only on `/auth/verify`, never on proxied traffic. */
const FORWARD_AUTH_HEADERS = [
  'x-original-uri',
  'x-original-url',
  'x-original-method',
  'x-forwarded-uri',
  'x-forwarded-method',
];
const FORWARDED_HEADERS = [
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-forwarded-port',
  'x-forwarded-prefix',
  'x-real-ip',
];
/**
 * Hop-by-hop headers (RFC 9110 §7.6.1), and `Expect`: Node has answered
 * `100 Continue` already, so the expectation is met at this hop.
 */
const HOP_BY_HOP = [
  'expect',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'te',
  'trailer',
  'upgrade',
];

export interface HeaderPolicy {
  /** The identity headers of a principal, by their configured names. */
  identityHeaders(principal: Principal): Record<string, string>;
  /** Rewrites `req.headers` in place for forwarding. */
  rewrite(
    req: IncomingMessage,
    principal: Principal,
    options: { requestId: string; stripAuthorization: boolean; upgrade: boolean },
  ): void;
}

export function createHeaderPolicy(names: IdentityHeaderNames, trusted: TrustCheck): HeaderPolicy {
  const identity = Object.values(names).map(foldHeaderName);
  // X-Forwarded-* is always replaced: a trusted proxy's values are read before the strip.
  const strip = new Set([
    ...identity,
    REQUEST_ID_HEADER,
    ...FORWARD_AUTH_HEADERS,
    ...HOP_BY_HOP,
    ...FORWARDED_HEADERS,
  ]);
  const lower = {
    tenantId: names.tenantId.toLowerCase(),
    tenantType: names.tenantType.toLowerCase(),
    userId: names.userId.toLowerCase(),
    userEmail: names.userEmail.toLowerCase(),
  };

  return {
    identityHeaders: (p) => ({
      [names.tenantId]: p.tenantId,
      [names.tenantType]: p.tenantType,
      [names.userId]: p.userId,
      [names.userEmail]: p.email,
    }),
    rewrite(req, principal, options) {
      const headers = req.headers;
      const peer = req.socket.remoteAddress;
      const fromTrusted = trusted(peer);
      const { host, connection, upgrade } = headers;
      const clientFor = fromTrusted ? headers['x-forwarded-for'] : undefined;
      const clientProto = fromTrusted ? headers['x-forwarded-proto'] : undefined;
      const clientHost = fromTrusted ? headers['x-forwarded-host'] : undefined;
      const listed = listedIn(connection);

      // A new object rather than `delete`: deleting properties turns an object
      // into a slow dictionary, and http-proxy copies these headers again.
      const out: IncomingHttpHeaders = {};
      // Node has lower-cased every name: only `_` spellings need folding.
      for (const name in headers) {
        const folded = name.includes('_') ? foldHeaderName(name) : name;
        if (
          !strip.has(folded) &&
          listed?.has(folded) !== true &&
          !(options.stripAuthorization && folded === 'authorization')
        ) {
          out[name] = headers[name];
        }
      }
      out[lower.tenantId] = principal.tenantId;
      out[lower.tenantType] = principal.tenantType;
      out[lower.userId] = principal.userId;
      out[lower.userEmail] = principal.email;
      out[REQUEST_ID_HEADER] = options.requestId;
      out['x-forwarded-for'] =
        clientFor === undefined ? (peer ?? '') : `${String(clientFor)}, ${peer ?? ''}`;
      out['x-forwarded-proto'] =
        clientProto ?? ((req.socket as TLSSocket).encrypted ? 'https' : 'http');
      const forwardedHost = clientHost ?? host;
      if (forwardedHost !== undefined) out['x-forwarded-host'] = forwardedHost;
      if (options.upgrade) {
        if (connection !== undefined) out.connection = connection;
        if (upgrade !== undefined) out.upgrade = upgrade;
      }
      req.headers = out;
    },
  };
}

/** Headers a client names in `Connection` are hop-by-hop too (RFC 9110 §7.6.1). */
function listedIn(connection: string | undefined): Set<string> | undefined {
  if (connection === undefined || connection === 'keep-alive' || connection === 'close')
    return undefined;
  return new Set(
    connection
      .split(',')
      .map((h) => foldHeaderName(h.trim()))
      .filter((h) => h !== ''),
  );
}
