/**
 * The origin the gateway writes into what leaves it (the RFC 8414 metadata's
 * URLs, a browser sign-in's `redirect_uri` at a tenant's identity provider):
 * `publicUrl` when configured. Without it, the origin the request was
 * addressed to — its scheme and `Host`, or, from a trusted proxy
 * (`trustedProxies`), the first `X-Forwarded-Proto` / `X-Forwarded-Host`
 * entry — and then only a host a URL can hold unchanged: a DNS name, an IPv4
 * address or a bracketed IPv6 address, with an optional port. Anything else
 * (`a.example/x?y=`, userinfo, percent-escapes, RFC 3986's sub-delims, an
 * empty or missing Host) is refused with 400 `invalid_request`, never
 * written into a URL: a client must not choose where the gateway's own
 * documents point.
 */
import type { IncomingMessage } from 'node:http';
import { isIPv6 } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { GatewayError } from '../errors.js';

/** `scheme://host[:port]` of a request (see the file header). @throws GatewayError `invalid_request` */
export type PublicOrigin = (req: IncomingMessage) => string;

/** DNS labels of letters, digits and `-` (an IPv4 address is such a name), one optional trailing dot. */
const NAME = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.?$/;
const PORT = /^[0-9]{1,5}$/;
const BAD_HOST = new GatewayError(
  'invalid_request',
  'The Host the request is addressed to is not a valid host[:port].',
);

/**
 * @param publicUrl config `publicUrl` (an origin, validated by the schema)
 * @param trusted whether a peer is a trusted proxy (read per request: it reloads)
 */
export function createPublicOrigin(
  publicUrl: string | undefined,
  trusted: (peer: string | undefined) => boolean,
): PublicOrigin {
  if (publicUrl !== undefined) {
    const fixed = new URL(publicUrl).origin;
    return () => fixed;
  }
  return (req) => {
    const fromProxy = trusted(req.socket.remoteAddress);
    const proto =
      (fromProxy ? firstEntry(req.headers['x-forwarded-proto']) : undefined) ??
      ((req.socket as TLSSocket).encrypted ? 'https' : 'http');
    const host =
      (fromProxy ? firstEntry(req.headers['x-forwarded-host']) : undefined) ?? req.headers.host;
    return `${proto === 'https' ? 'https' : 'http'}://${validHost(host)}`;
  };
}

/** `host[:port]`, lower-case, when a URL holds it as it is; else a `GatewayError`. */
export function validHost(value: string | undefined): string {
  if (value === undefined) throw BAD_HOST;
  const host = value.toLowerCase();
  let name = host;
  let port: string | undefined;
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    if (end < 0 || !isIPv6(host.slice(1, end))) throw BAD_HOST;
    name = host.slice(0, end + 1);
    const rest = host.slice(end + 1);
    if (rest !== '') {
      if (!rest.startsWith(':')) throw BAD_HOST;
      port = rest.slice(1);
    }
  } else {
    const colon = host.indexOf(':');
    if (colon >= 0) {
      name = host.slice(0, colon);
      port = host.slice(colon + 1);
    }
    if (name.length > 253 || !NAME.test(name)) throw BAD_HOST;
  }
  if (port !== undefined && (!PORT.test(port) || Number(port) > 65535)) throw BAD_HOST;
  return host;
}

function firstEntry(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  const entry = text?.split(',')[0]?.trim();
  return entry === '' ? undefined : entry;
}
