/**
 * The origin a request was addressed to, `scheme://host[:port]` as a browser
 * writes `Origin`: what the CSRF rule of session-admitted requests compares
 * `Origin` with (`session-origin.ts`, after `http/same-origin.ts`).
 *
 * - proxied and upgrade requests: the scheme a trusted proxy reports
 *   (`X-Forwarded-Proto`), else `https` on a TLS listener, else `publicUrl`'s
 *   scheme (TLS ended in front of the gateway), else `http`; the host a
 *   trusted proxy reports (`X-Forwarded-Host`), else `Host`;
 * - forward-auth: the original request's, as the ingress reports it
 *   (`X-Forwarded-Proto`; the hosts of `verify-request.ts` `originalHosts`,
 *   which must all be one), since the browser spoke to the ingress.
 *
 * Undefined when the host cannot be told: no `Origin` then matches (the rule
 * fails closed; a browser's `Sec-Fetch-Site` still decides alone).
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { ownOrigin } from '../../http/same-origin.js';
import type { TrustCheck } from './trusted-proxies.js';
import { originalHosts } from './verify-request.js';

/**
 * @param verifyPath forward-auth's own path (`/auth/verify…`): the origin of
 *   the request the ingress asks about; undefined for a proxied request
 */
export type RequestOrigin = (req: IncomingMessage, verifyPath?: string) => string | undefined;

/**
 * @param trusted whether a peer is a trusted proxy (`trustedProxies`)
 * @param publicUrl config `publicUrl`, whose scheme says TLS ends in front
 */
export function createRequestOrigin(
  trusted: TrustCheck,
  publicUrl: string | undefined,
): RequestOrigin {
  const fallbackScheme = publicUrl?.startsWith('https:') ? 'https' : 'http';
  return (req, verifyPath) => {
    const fromProxy = verifyPath !== undefined || trusted(req.socket.remoteAddress);
    const proto = fromProxy ? firstEntry(req.headers['x-forwarded-proto']) : undefined;
    const scheme =
      proto?.toLowerCase() === 'https' ||
      (proto === undefined && ((req.socket as TLSSocket).encrypted || fallbackScheme === 'https'))
        ? 'https'
        : 'http';
    const host =
      verifyPath === undefined
        ? ((fromProxy ? firstEntry(req.headers['x-forwarded-host']) : undefined) ??
          req.headers.host)
        : originalHost(req, verifyPath);
    return ownOrigin(scheme, host);
  };
}

/** The one host the original request was addressed to; undefined when none, or several differ. */
function originalHost(req: IncomingMessage, verifyPath: string): string | undefined {
  let hosts: string[];
  try {
    hosts = originalHosts(req, verifyPath).map((host) => host.trim().toLowerCase());
  } catch {
    return undefined;
  }
  return hosts.every((host) => host === hosts[0]) ? hosts[0] : undefined;
}

function firstEntry(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  const first = text?.split(',')[0]?.trim();
  return first === '' ? undefined : first;
}
