/**
 * Header names as upstream frameworks see them: case-insensitive, and with
 * `_` and `-` folded together (CGI, WSGI, Rack and several proxies map both
 * to one name), so `X_User_Id` counts as `X-User-Id`; a run of them counts as
 * one (normalisers that collapse delimiters read `Transfer---Encoding` and
 * `Transfer___Encoding` as `Transfer-Encoding`: aws/http-desync-guardian
 * calls such names ambiguous).
 */
export function foldHeaderName(name: string): string {
  return name.toLowerCase().replace(/[-_]+/g, '-');
}

/**
 * Identity-like headers beyond the four the gateway injects: what other auth proxies, CDNs and load balancers assert about the user,
 * the client address or the original host. An upstream written for one of
 * those would believe a client that sent them, so they are stripped by
 * default (config `stripHeaders.keep` lets chosen ones through). A trailing
 * `*` matches every name with that prefix.
 */
export const IDENTITY_LIKE_HEADERS: readonly string[] = [
  // The user, as auth proxies assert it (oauth2-proxy, Apache, Kong, Grafana, …)
  'x-forwarded-user',
  'x-forwarded-email',
  'x-forwarded-preferred-username',
  'x-forwarded-groups',
  'x-forwarded-access-token',
  'x-auth-request-*',
  'remote-user',
  'x-remote-user',
  'x-remote-group',
  'x-remote-extra-*',
  'x-authenticated-user',
  'x-authenticated-userid',
  'x-authenticated-groups',
  'x-authenticated-scope',
  'x-consumer-id',
  'x-consumer-username',
  'x-consumer-custom-id',
  'x-credential-identifier',
  'x-webauth-user',
  'x-userinfo',
  'x-ms-client-principal*',
  'x-goog-authenticated-user-*',
  'x-amzn-oidc-*',
  'cf-access-authenticated-user-email',
  'cf-access-jwt-assertion',
  // The client certificate, as TLS-terminating proxies assert it
  'x-forwarded-client-cert',
  'x-client-cert',
  'x-client-verify',
  'x-client-dn',
  'x-ssl-client-*',
  'ssl-client-cert',
  'ssl-client-verify',
  // The client address
  'true-client-ip',
  'x-client-ip',
  'client-ip',
  'x-cluster-client-ip',
  'cf-connecting-ip',
  'cf-connecting-ipv6',
  'fastly-client-ip',
  'x-original-forwarded-for',
  'x-remote-addr',
  'x-remote-ip',
  'x-originating-ip',
  'x-envoy-external-address',
  'x-azure-clientip',
  'x-azure-socketip',
  'x-forwarded',
  'forwarded-for',
  // The original host, scheme and path
  'x-original-host',
  'x-host',
  'x-forwarded-server',
  'x-forwarded-ssl',
  'x-forwarded-scheme',
  'x-forwarded-protocol',
  'x-url-scheme',
  'front-end-https',
  'x-rewrite-url',
  'x-envoy-original-path',
];

/** Whether a folded header name matches any pattern (exact, or `prefix*`). */
export type HeaderNameMatcher = (folded: string) => boolean;

/** A matcher for folded names; patterns are folded here, in any spelling. */
export function headerNameMatcher(patterns: readonly string[]): HeaderNameMatcher {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const pattern of patterns) {
    const folded = foldHeaderName(pattern);
    if (folded.endsWith('*')) prefixes.push(folded.slice(0, -1));
    else exact.add(folded);
  }
  return (folded) => exact.has(folded) || prefixes.some((p) => folded.startsWith(p));
}
