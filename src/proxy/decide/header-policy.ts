/**
 * What the upstream sees: every client-supplied identity
 * header is removed first — in any letter case and in the `_` spellings that
 * upstream frameworks fold into the same name — then the verified ones are
 * injected. `X-Forwarded-*` from the client is believed only from trusted
 * proxies; the forward-auth headers a client sends carry no weight and are
 * dropped; hop-by-hop headers (and any header the client lists in
 * `Connection`) never cross the proxy, nor do the identity-like headers of
 * other auth proxies and CDNs (config `stripHeaders`), nor any header whose
 * value carries an API key (`tgk_…`: `api-key-values.ts`), whatever its name
 * or scheme, the route's `stripAuthorization` notwithstanding.
 *
 * Framing is the gateway's own (no request smuggling): the
 * client's `Content-Length` and `Transfer-Encoding` never cross either; the
 * forwarded request carries the framing Node parsed, and a request whose
 * `Connection` would remove framing or identity headers is refused
 * (RFC 9112 §6.3, RFC 9110 §7.6.1).
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Principal } from '../../auth/credentials/authenticate.js';
import { soleCookieValue } from '../../auth/credentials/read-credential.js';
import type { GatewayConfig } from '../../config/index.js';
import { STRIP_HEADERS_DEFAULTS } from '../../config/schema/headers.js';
import { GatewayError } from '../../errors.js';
import { REQUEST_ID_HEADER } from '../../http/request-id.js';
import { foldHeaderName, headerNameMatcher, IDENTITY_LIKE_HEADERS } from '../../header-names.js';
import { authorizationCarriesApiKey, carriesApiKey } from './api-key-values.js';
import { withoutCookie, type CookieHeader } from '../../text/cookies.js';
import { checkTransferCoding } from './transfer-coding.js';
import type { TrustCheck } from './trusted-proxies.js';

export type IdentityHeaderNames = GatewayConfig['identityHeaders'];

/**
 * Config `stripHeaders`: names (any spelling, `prefix*` allowed) stripped on
 * top of {@link IDENTITY_LIKE_HEADERS}, and names of that list let through.
 */
export interface StripHeaders {
  add: readonly string[];
  keep: readonly string[];
}

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
/** The client's framing: the gateway frames every forwarded request itself. */
const FRAMING = ['content-length', 'transfer-encoding'];
const TWO_HOST_LINES = new GatewayError('invalid_request', 'The request has two Host lines.');

/** The headers the gateway sets on every forwarded request, besides the identity ones. */
const ASSERTED = [REQUEST_ID_HEADER, 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host'];

/** Sent with every framing refusal: the rest of the connection cannot be trusted either. */
const CLOSE = { headers: { connection: 'close' } };
const CONNECTION_NAMES_PROTECTED = new GatewayError(
  'invalid_request',
  'The Connection header may not name Content-Length, Transfer-Encoding, Host or a header the gateway sets.',
  CLOSE,
);
/** Names whose strip decision was made once; bounded, client-chosen names are unbounded. */
const DECIDED_NAMES_MAX = 4096;

export interface HeaderPolicy {
  /**
   * Refuses, closing the connection, a request the gateway cannot forward
   * unambiguously: a transfer coding other than `chunked` (501
   * `not_implemented`, or 400 when the body cannot be framed: see
   * `transfer-coding.ts`), or a `Connection` naming `Content-Length`,
   * `Transfer-Encoding`, `Host`, an identity header or another header the
   * gateway sets (400 `invalid_request`). Runs before anything else looks at
   * a proxied, forward-auth or upgrade request.
   * @throws GatewayError
   */
  checkFraming(req: IncomingMessage): void;
  /**
   * The hosts the request is addressed to, as the upstream will be told:
   * its Host and, from a trusted proxy, each `X-Forwarded-Host` entry (from
   * anyone else that header is replaced by Host). For routes that name hosts.
   * @throws GatewayError `invalid_request` for two Host lines (RFC 9112 §3.2)
   */
  routingHosts(req: IncomingMessage): string[];
  /**
   * The verdict's headers: a principal's identity by the configured names;
   * empty values for an anonymous request (they overwrite a client's), and
   * for the parts a principal has not (a machine client's user id and e-mail,
   * a user's client id).
   */
  identityHeaders(principal: Principal | undefined): Record<string, string>;
  /**
   * Rewrites `req.headers` in place for forwarding, framing included: a
   * chunked body → `Transfer-Encoding: chunked`, a known length →
   * `Content-Length`, no body → neither; an upgrade carries no body and a
   * clean `Connection: upgrade` + `Upgrade: websocket`.
   */
  rewrite(
    req: IncomingMessage,
    /** Undefined on a public route without a token: identity headers are only stripped. */
    principal: Principal | undefined,
    options: { requestId: string; stripAuthorization: boolean; upgrade: boolean },
  ): void;
  /**
   * The names among `names` (a request's, lower-case) that never reach an
   * upstream whatever the verdict: identity headers and identity-like ones
   * (`-bin` variants too), the API-key header, forward-auth's own. Not the
   * hop-by-hop, framing and forwarding headers a proxy manages itself. For
   * Envoy's ext_authz `headers_to_remove`.
   */
  neverForwarded(names: Iterable<string>): string[];
  /** The names {@link HeaderPolicy.rewrite} sets on every request it may forward, lower-case. */
  readonly setNames: readonly string[];
  /**
   * While sessions are on, a request's `Cookie` as it may reach an upstream:
   * without the session cookie ('' when nothing is left). Undefined when
   * sessions are off or no `Cookie` was sent. For forward-auth's 200, whose
   * ingress forwards the request itself.
   */
  upstreamCookie(cookie: string | undefined): string | undefined;
}

/**
 * @param apiKeyHeader the header API keys come in while they are on
 *   (`apiKeys.header`): a credential, never forwarded — in any spelling
 * @param sessionCookie the session cookie's name while sessions are on
 *   (`sessionCookieName(config.sessions)`): a secret, removed from every
 *   forwarded `Cookie` header, on every route, in any letter case; the other
 *   cookies cross in their order, and a `Cookie` left empty is dropped
 * @param preSessionCookie the sign-in page's pre-session cookie's name while
 *   sessions are on: removed the same way (whoever holds it finishes a
 *   sign-in waiting for its tenant choice: the form token derives from it)
 */
export function createHeaderPolicy(
  names: IdentityHeaderNames,
  trusted: TrustCheck,
  stripHeaders: StripHeaders = STRIP_HEADERS_DEFAULTS,
  apiKeyHeader?: string,
  sessionCookie?: string,
  preSessionCookie?: string,
): HeaderPolicy {
  return new Policy(names, trusted, stripHeaders, apiKeyHeader, sessionCookie, preSessionCookie);
}

type RewriteOptions = Parameters<HeaderPolicy['rewrite']>[2];

class Policy implements HeaderPolicy {
  /** Dropped whatever the request: identity, forwarding, forward-auth, hop-by-hop, framing. */
  private readonly strip: Set<string>;
  private readonly identityLike: (folded: string) => boolean;
  private readonly kept: (folded: string) => boolean;
  /** What `Connection` may not remove: what the upstream needs to frame and trust the request. */
  private readonly protectedNames: Set<string>;
  /** Names whose strip decision was made once. */
  private readonly decided = new Map<string, boolean>();
  /** The identity headers' names, lower-cased as Node gives header names. */
  private readonly lower: IdentityHeaderNames;
  /** Each principal's identity headers, as {@link Policy.injected} made them. */
  private readonly identityOf = new WeakMap<Principal, readonly string[]>();
  readonly setNames: readonly string[];

  constructor(
    private readonly names: IdentityHeaderNames,
    private readonly trusted: TrustCheck,
    stripHeaders: StripHeaders,
    apiKeyHeader: string | undefined,
    private readonly sessionCookie: string | undefined,
    private readonly preSessionCookie?: string,
  ) {
    const identity = Object.values(names).map(foldHeaderName);
    // X-Forwarded-* is always replaced: a trusted proxy's values are read before the strip.
    this.strip = new Set([
      ...identity,
      REQUEST_ID_HEADER,
      ...FORWARD_AUTH_HEADERS,
      ...HOP_BY_HOP,
      ...FORWARDED_HEADERS,
      ...FRAMING,
      ...(apiKeyHeader === undefined ? [] : [foldHeaderName(apiKeyHeader)]),
    ]);
    this.identityLike = headerNameMatcher([...IDENTITY_LIKE_HEADERS, ...stripHeaders.add]);
    this.kept = headerNameMatcher(stripHeaders.keep);
    this.protectedNames = new Set([...FRAMING, 'host', ...identity, ...ASSERTED]);
    this.lower = {
      tenantId: names.tenantId.toLowerCase(),
      tenantType: names.tenantType.toLowerCase(),
      userId: names.userId.toLowerCase(),
      userEmail: names.userEmail.toLowerCase(),
      scope: names.scope.toLowerCase(),
      clientId: names.clientId.toLowerCase(),
    };
    this.setNames = [...Object.values(this.lower), ...ASSERTED];
  }

  neverForwarded(names: Iterable<string>): string[] {
    const managed = new Set([...HOP_BY_HOP, ...FRAMING, ...FORWARDED_HEADERS, REQUEST_ID_HEADER]);
    const out: string[] = [];
    for (const name of names) {
      const lower = name.toLowerCase();
      if (!managed.has(lower) && !lower.startsWith(':') && this.stripped(lower)) out.push(lower);
    }
    return out;
  }

  upstreamCookie(cookie: string | undefined): string | undefined {
    if (cookie === undefined || this.sessionCookie === undefined) return undefined;
    return (this.withoutGatewayCookies(cookie) as string | undefined) ?? '';
  }

  /** `cookie` without the session and pre-session cookies (undefined when nothing is left). */
  private withoutGatewayCookies(cookie: CookieHeader): CookieHeader {
    const kept = withoutCookie(cookie, this.sessionCookie as string);
    return this.preSessionCookie === undefined ? kept : withoutCookie(kept, this.preSessionCookie);
  }

  checkFraming(req: IncomingMessage): void {
    const { connection } = req.headers;
    // Node refused every other malformed framing already (CL with TE,
    // duplicate or non-numeric CL, most TE not ending in chunked).
    checkTransferCoding(req.headers['transfer-encoding']);
    if (connection === undefined || connection === 'keep-alive' || connection === 'close') return;
    // Node joins repeated Connection lines with ", ".
    for (const token of connection.split(',')) {
      if (this.protectedNames.has(foldHeaderName(token.trim()))) throw CONNECTION_NAMES_PROTECTED;
    }
  }

  routingHosts(req: IncomingMessage): string[] {
    const hosts: string[] = [];
    const raw = req.rawHeaders;
    let hostLines = 0;
    for (let i = 0; i < raw.length; i += 2) {
      if ((raw[i] as string).toLowerCase() !== 'host') continue;
      if (++hostLines > 1) throw TWO_HOST_LINES;
      hosts.push(raw[i + 1] as string);
    }
    const forwarded = req.headers['x-forwarded-host'];
    if (typeof forwarded === 'string' && this.trusted(req.socket.remoteAddress)) {
      for (const entry of forwarded.split(',')) if (entry.trim() !== '') hosts.push(entry);
    }
    return hosts;
  }

  identityHeaders(p: Principal | undefined): Record<string, string> {
    const { names } = this;
    const client = p !== undefined && isClient(p) ? p : undefined;
    return {
      [names.tenantId]: p?.tenantId ?? '',
      [names.tenantType]: p?.tenantType ?? '',
      [names.userId]: client !== undefined ? '' : (p?.userId ?? ''),
      [names.userEmail]: p?.email ?? '',
      [names.scope]: p === undefined ? '' : scopeValue(p),
      [names.clientId]: client?.clientId ?? '',
    };
  }

  rewrite(req: IncomingMessage, principal: Principal | undefined, options: RewriteOptions): void {
    const headers = req.headers;
    const peer = req.socket.remoteAddress;
    const fromTrusted = this.trusted(peer);
    // An API key is a long-lived secret: it never crosses, whatever the route says.
    const out = this.passed(headers, options.stripAuthorization || principal?.kind === 'api_key');
    if (principal !== undefined) {
      const injected = this.injected(principal);
      for (let i = 0; i < injected.length; i += 2) out[injected[i] as string] = injected[i + 1];
    }
    out[REQUEST_ID_HEADER] = options.requestId;
    const clientFor = fromTrusted ? headers['x-forwarded-for'] : undefined;
    const clientProto = fromTrusted ? headers['x-forwarded-proto'] : undefined;
    const clientHost = fromTrusted ? headers['x-forwarded-host'] : undefined;
    out['x-forwarded-for'] =
      clientFor === undefined ? (peer ?? '') : `${String(clientFor)}, ${peer ?? ''}`;
    out['x-forwarded-proto'] =
      clientProto ?? ((req.socket as TLSSocket).encrypted ? 'https' : 'http');
    const forwardedHost = clientHost ?? headers.host;
    if (forwardedHost !== undefined) out['x-forwarded-host'] = forwardedHost;
    frame(out, headers, options.upgrade);
    // HTTP/2's compatibility request has a getter only: an own property shadows
    // it (`translateHttp2Request` made one, which an assignment then fills).
    if (req.httpVersionMajor >= 2 && !Object.hasOwn(req, 'headers'))
      Object.defineProperty(req, 'headers', { value: out, writable: true, configurable: true });
    else req.headers = out;
  }

  /**
   * The principal's identity headers, `[name, value, …]` by the lower-case
   * names, made once per principal: a token's principal is one object for as
   * long as the token is cached (`auth/credentials/authenticate.ts`), so the steady state
   * neither joins the scopes nor builds the list again.
   */
  private injected(principal: Principal): readonly string[] {
    const known = this.identityOf.get(principal);
    if (known !== undefined) return known;
    const lower = this.lower;
    const injected = [lower.tenantId, principal.tenantId, lower.tenantType, principal.tenantType];
    // A client has no user: its id goes in its own header, and no X-User-* is sent.
    // A session's principal is its user's, injected as for a user token.
    if (isClient(principal)) injected.push(lower.clientId, principal.clientId ?? '');
    else injected.push(lower.userId, principal.userId, lower.userEmail, principal.email);
    injected.push(lower.scope, scopeValue(principal));
    this.identityOf.set(principal, injected);
    return injected;
  }

  /**
   * The client's headers that cross: a new object rather than `delete`
   * (deleting properties turns an object into a slow dictionary, and undici
   * walks these headers once more). A value carrying an API key never
   * crosses: `Authorization` (any scheme) is looked into only when the route
   * keeps it, every other header by a length test first.
   */
  private passed(headers: IncomingHttpHeaders, stripAuthorization: boolean): IncomingHttpHeaders {
    const listed = listedIn(headers.connection);
    const out: IncomingHttpHeaders = {};
    // Node has lower-cased every name: only `_` spellings need folding.
    for (const name in headers) {
      if (this.stripped(name) || (listed !== undefined && listed.has(foldHeaderName(name))))
        continue;
      let value = headers[name];
      if (name === 'authorization') {
        if (stripAuthorization || authorizationCarriesApiKey(value as string)) continue;
      } else {
        if (name === 'cookie' && this.sessionCookie !== undefined) {
          // The steady state (the session cookie alone, spelled exactly) costs prefix tests.
          if (soleCookieValue(value as string, this.sessionCookie) !== undefined) continue;
          value = this.withoutGatewayCookies(value);
          if (value === undefined) continue;
        }
        if (carriesApiKey(value)) continue;
      }
      out[name] = value;
    }
    return out;
  }

  /** Whether a client header (lower-case, as Node gives it) is dropped whatever the request. */
  private stripped(name: string): boolean {
    let drop = this.decided.get(name);
    if (drop === undefined) {
      const folded = foldHeaderName(name);
      // gRPC metadata: `x-user-id-bin` is `x-user-id`, base64-encoded.
      const stem = folded.endsWith('-bin') ? folded.slice(0, -4) : folded;
      drop =
        this.strip.has(folded) ||
        this.strip.has(stem) ||
        (this.identityLike(stem) && !this.kept(stem));
      if (this.decided.size < DECIDED_NAMES_MAX) this.decided.set(name, drop);
    }
    return drop;
  }
}

/** A machine client's principal (its token or one of its API keys): no user. */
function isClient(
  principal: Principal,
): principal is Exclude<Principal, { kind: 'user' | 'session' }> {
  return principal.kind === 'client' || principal.kind === 'api_key';
}

/** The granted scopes, space-separated and sorted (empty: none). */
function scopeValue(principal: Principal): string {
  return principal.scopes.join(' ');
}

/** The forwarded request's framing, the gateway's own: from what Node parsed, never the client's headers. */
function frame(out: IncomingHttpHeaders, headers: IncomingHttpHeaders, upgrade: boolean): void {
  const { 'transfer-encoding': encoding, 'content-length': length } = headers;
  if (upgrade) {
    // Only the upgrade itself crosses: the client's Connection may name other headers.
    out.connection = 'upgrade';
    // Anything but websocket is left for the forwarder to refuse.
    if (headers.upgrade !== undefined)
      out.upgrade = headers.upgrade.toLowerCase() === 'websocket' ? 'websocket' : headers.upgrade;
  } else if (encoding !== undefined) {
    // `checkFraming` let only `chunked` alone through; Node has decoded it.
    out['transfer-encoding'] = 'chunked';
  } else if (length !== undefined) {
    // Node accepted exactly one, all digits, and reads exactly that many bytes.
    out['content-length'] = length;
  }
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
