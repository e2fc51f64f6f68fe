/**
 * Forward-auth at `/auth/verify`: the verdict the proxy would give,
 * for an ingress that does the proxying itself. The original request is read
 * from the headers each ingress sends:
 *
 * - ingress-nginx `auth-url`: `X-Original-URL` (full URL), `X-Original-Method`;
 *   plain nginx `auth_request` set-ups: `X-Original-URI`;
 * - Traefik ForwardAuth: `X-Forwarded-Uri`, `X-Forwarded-Host`, `X-Forwarded-Method`;
 * - Envoy ext_authz (HTTP): the original path appended to `/auth/verify`,
 *   with the original Host.
 *
 * 200 carries the identity headers (for `auth-response-headers` /
 * `authResponseHeaders` / `allowed_upstream_headers`); a refusal is the
 * proxy's 401/403 JSON.
 */
import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../../errors.js';
import { normaliseTarget } from './normalise-path.js';
import { requestView, type RequestView } from './tenant-match.js';

export const FORWARD_AUTH_PATH = '/auth/verify';

export function isForwardAuthPath(path: string): boolean {
  return path === FORWARD_AUTH_PATH || path.startsWith(`${FORWARD_AUTH_PATH}/`);
}

/**
 * The request the ingress is asking about, as tenant matching sees it — every
 * reading of it. Ingresses pass client headers on to the auth request (Traefik
 * copies them all), so a client could add an `X-Original-URI` of its own to
 * describe a harmless request. We do not pick one source: every path source
 * present gives a view, each view reads every host source present (Host,
 * `X-Forwarded-Host`, `Forwarded`, `X-Original-URL`'s authority), and the
 * verdict must hold for each.
 */
export function originalRequestViews(
  req: IncomingMessage,
  verifyPath: string,
  query: string,
): RequestView[] {
  const header = (name: string) => {
    const value = req.headers[name];
    return typeof value === 'string' && value !== '' ? value : undefined;
  };
  const uris: string[] = [];
  const hosts: string[] = [];
  const fullUrl = header('x-original-url');
  if (fullUrl !== undefined) {
    // Path, query and authority are taken from the raw text, so they get the
    // same normalisation (and refusals) as every other path and host; the URL
    // parser only vouches that the whole is a URL.
    const match = /^https?:\/\/([^/?#]*)(.*)$/is.exec(fullUrl);
    if (match === null || !URL.canParse(fullUrl)) {
      throw new GatewayError('invalid_request', 'X-Original-URL is not an absolute http(s) URL.');
    }
    uris.push(match[2] || '/');
    hosts.push(match[1] as string);
  }
  for (const name of ['x-original-uri', 'x-forwarded-uri']) {
    const value = header(name);
    if (value !== undefined) uris.push(value);
  }
  const suffix = verifyPath.slice(FORWARD_AUTH_PATH.length);
  if (suffix !== '' || uris.length === 0)
    uris.push(`${suffix || '/'}${query === '' ? '' : `?${query}`}`);

  return uris.map((uri) => {
    const target = normaliseTarget(uri);
    return requestView(req.rawHeaders, target.path, target.query, hosts);
  });
}

const NO_ORIGINAL_HOST = new GatewayError(
  'invalid_request',
  'Routes name hosts, and this forward-auth request names no original host (X-Forwarded-Host or X-Original-URL).',
);

/**
 * The hosts the original request was addressed to, for routes that name
 * hosts: `X-Original-URL`'s authority and each `X-Forwarded-Host` entry (the
 * ingress's account), and Host only when the original path rides on the
 * verify path (Envoy sends the original Host; Traefik, ingress-nginx and
 * nginx `auth_request` send the gateway's own name). Every one must select the
 * same route (`routeOf`), so a client's own addition can only refuse.
 * @throws GatewayError `invalid_request` when none names a host: the verdict
 *   would be for a host nobody vouched for
 */
export function originalHosts(req: IncomingMessage, verifyPath: string): string[] {
  const hosts: string[] = [];
  const fullUrl = req.headers['x-original-url'];
  if (typeof fullUrl === 'string' && fullUrl !== '') {
    const authority = /^https?:\/\/([^/?#]*)/is.exec(fullUrl)?.[1];
    if (authority !== undefined) hosts.push(authority);
  }
  const forwarded = req.headers['x-forwarded-host'];
  if (typeof forwarded === 'string') {
    for (const entry of forwarded.split(',')) if (entry.trim() !== '') hosts.push(entry);
  }
  const host = req.headers.host;
  if (host !== undefined && verifyPath !== FORWARD_AUTH_PATH) hosts.push(host);
  if (hosts.length === 0) throw NO_ORIGINAL_HOST;
  return hosts;
}

/**
 * The methods of the request the ingress asks about, for the route's scopes:
 * each one a source names (`X-Original-Method`, `X-Forwarded-Method`, every
 * line of either), upper-cased. As with paths, no source is picked: a client
 * may add the other ingress's header, so the verdict must hold for each.
 * The verify request's own method counts when Envoy appended the original
 * path (its check request keeps the original method), or when no source
 * names one.
 */
export function originalMethods(req: IncomingMessage, verifyPath: string): string[] {
  const methods = new Set<string>();
  for (const name of ['x-original-method', 'x-forwarded-method']) {
    const value = req.headers[name];
    if (typeof value !== 'string') continue;
    for (const method of value.split(',')) {
      const trimmed = method.trim();
      if (trimmed !== '') methods.add(trimmed.toUpperCase());
    }
  }
  if (methods.size === 0 || verifyPath !== FORWARD_AUTH_PATH) methods.add(req.method ?? 'GET');
  return [...methods];
}

/**
 * The request the ingress asked about, for the access log: the method and
 * URI (without its query: it may carry credentials) each ingress reports,
 * the first source present; the host likewise. Log text only — the verdict
 * reads every source (`originalRequestViews`).
 */
export function originalRequestForLog(
  req: IncomingMessage,
  verifyPath: string,
): { method: string | undefined; host: string | undefined; uri: string | undefined } {
  const header = (name: string) => {
    const value = req.headers[name];
    return typeof value === 'string' && value !== '' ? value : undefined;
  };
  const fullUrl = /^https?:\/\/([^/?#]*)([^?#]*)/i.exec(header('x-original-url') ?? '');
  const suffix = verifyPath.startsWith(`${FORWARD_AUTH_PATH}/`)
    ? verifyPath.slice(FORWARD_AUTH_PATH.length)
    : undefined;
  const uri =
    (fullUrl === null ? undefined : fullUrl[2] || '/') ??
    header('x-original-uri') ??
    header('x-forwarded-uri') ??
    suffix;
  return {
    method: header('x-original-method') ?? header('x-forwarded-method'),
    host:
      fullUrl?.[1] ||
      header('x-forwarded-host') ||
      (suffix === undefined ? undefined : header('host')),
    uri: uri?.split('?', 1)[0],
  };
}
