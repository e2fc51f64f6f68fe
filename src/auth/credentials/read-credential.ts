/**
 * The one reader of a request's credential (issue 43): which credential a
 * request presents, for every place that asks — the pipeline's anonymous
 * check and the route authenticator (proxied requests, WebSocket upgrades,
 * forward-auth), the api's Bearer endpoints — so that no spelling gets two
 * verdicts. The table of spellings is in docs/security.md ("Credential
 * spellings"); `test/auth/read-credential.test.ts` holds the reader to it and
 * `test/proxy/credential-spellings.test.ts` every entry way.
 *
 * The rule, after RFC 9110 §11.4 (`auth-scheme [ 1*SP token68 ]`, the scheme
 * a case-insensitive token; leading and trailing whitespace is not part of a
 * field value, §5.5) and RFC 6750 §2.1 (`Bearer 1*SP b64token`):
 *
 * - strict to accept: a bearer token is taken only as `Bearer`, one or more
 *   spaces, one b64token;
 * - lenient to recognise: a value whose scheme is `bearer` in any case — the
 *   token it begins with, after whitespace of any kind, ended by anything
 *   that is not a token character (a tab, U+00A0, `/` …) or by nothing — is a
 *   bearer credential: verified or refused, never let through as anonymous
 *   nor as another scheme's business.
 */
import { GatewayError } from '../../errors.js';
import { cookieValues, type CookieHeader } from '../../text/cookies.js';
import { API_KEY_PREFIX } from '../clients/secrets.js';
import { tokenRefused } from '../tokens/token-refusals.js';

/** No credential: no `Authorization` (or an empty one) and no API key. */
export interface NoCredential {
  readonly kind: 'none';
}

/** A bearer token (RFC 6750), as sent after `Bearer `. */
export interface BearerCredential {
  readonly kind: 'bearer';
  readonly token: string;
}

/** A machine client's API key (`tgk_…`), in `Authorization: Bearer` or the API-key header. */
export interface ApiKeyCredential {
  readonly kind: 'api_key';
  readonly key: string;
}

/** An `Authorization` of another scheme (`Basic` for the upstream's own use …): not the gateway's. */
export interface OtherCredential {
  readonly kind: 'other';
  /** The scheme as sent (`Basic`); '' when the value does not begin with a token. */
  readonly scheme: string;
}

/** A browser session's cookie (`sessions.cookie.name`): its value, `<session id>.<secret>`, as sent. */
export interface SessionCredential {
  readonly kind: 'session';
  readonly value: string;
}

/**
 * What a request presents. A session cookie is read only where a route takes
 * sessions ({@link readSessionCredential}).
 */
export type RequestCredential =
  NoCredential | BearerCredential | ApiKeyCredential | OtherCredential | SessionCredential;

/** What a request presents where only tokens are taken (the api's Bearer endpoints, keys off). */
export type TokenCredential = Exclude<RequestCredential, ApiKeyCredential | SessionCredential>;

/** The one `none`: it carries nothing, so it is shared. */
export const NO_CREDENTIAL: NoCredential = Object.freeze({ kind: 'none' });

/** The steady state's spelling of a bearer credential. */
export const EXACT_BEARER_PREFIX = 'Bearer ';

/** The scheme is the token the value begins with (RFC 9110 §5.6.2 tchar), after whitespace of any kind. */
const SCHEME = /^\s*([!#$%&'*+\-.^_`|~0-9A-Za-z]*)/;
const NAMES_BEARER = /^\s*bearer(?![!#$%&'*+\-.^_`|~0-9A-Za-z])/i;
/** RFC 6750 §2.1, OWS around it (RFC 9110 §5.5). */
const BEARER_TOKEN = /^[ \t]*bearer +([A-Za-z0-9\-._~+/]+=*)[ \t]*$/i;
const SPACE = 32;

const TWO_CREDENTIALS = new GatewayError(
  'invalid_request',
  'Send one credential: a bearer token or an API key, not both.',
);

/**
 * Whether an `Authorization` value names the Bearer scheme, however spelled
 * (see above): `Bearer <token>` spelled exactly costs a prefix test.
 */
export function namesBearer(authorization: string): boolean {
  return authorization.startsWith(EXACT_BEARER_PREFIX) || NAMES_BEARER.test(authorization);
}

/**
 * Whether a request presents a credential of the gateway's — what
 * {@link readCredential} answers as `bearer` or `api_key`, or refuses — without
 * reading it: a request that does is verified, never let through as
 * anonymous.
 * @param apiKey the API-key header's value where keys are on (else undefined)
 */
export function presentsCredential(
  authorization: string | undefined,
  apiKey: string | undefined,
): boolean {
  return apiKey !== undefined || (authorization !== undefined && namesBearer(authorization));
}

/**
 * `Bearer `, then the credential from its first character (no second space),
 * and — `keys` on — no API key: the steady state of proxied traffic. The reader
 * reads such a header as `bearer` of the rest whenever the rest is a b64token,
 * which every token that verified is: a caller may look the rest up among
 * tokens that verified at the cost of prefix tests and one slice (no regex),
 * and must ask the reader on a miss.
 */
export function isExactBearer(authorization: string | undefined, keys: boolean): boolean {
  return (
    authorization !== undefined &&
    authorization.startsWith(EXACT_BEARER_PREFIX) &&
    authorization.charCodeAt(EXACT_BEARER_PREFIX.length) !== SPACE &&
    !(keys && authorization.startsWith(API_KEY_PREFIX, EXACT_BEARER_PREFIX.length))
  );
}

/**
 * The credential of a request where only tokens are taken: `Bearer tgk_…` is
 * then a token like any other (and fails as one).
 * @throws GatewayError `invalid_token` (`not_bearer`) for a bearer credential
 *   that is not exactly one b64token after `Bearer` and spaces
 */
export function readTokenCredential(authorization: string | undefined): TokenCredential {
  if (authorization === undefined) return NO_CREDENTIAL;
  if (namesBearer(authorization)) return { kind: 'bearer', token: bearerToken(authorization) };
  const [read, scheme] = SCHEME.exec(authorization) as unknown as [string, string];
  // Only whitespace (RFC 9110 §5.5: not part of a value): nothing was sent.
  if (scheme === '' && read.length === authorization.length) return NO_CREDENTIAL;
  return { kind: 'other', scheme };
}

/**
 * The credential of a request where API keys are on: one of a bearer token,
 * an API key (in `Authorization: Bearer tgk_…` or the API-key header), or
 * none of the gateway's.
 * @param apiKey the API-key header's value (undefined: absent)
 * @throws GatewayError `invalid_request` for an API-key header beside a bearer
 *   credential (RFC 6750 §2: one method per request); as
 *   {@link readTokenCredential} otherwise
 */
export function readCredential(
  authorization: string | undefined,
  apiKey: string | undefined,
): RequestCredential {
  if (apiKey !== undefined) {
    if (authorization !== undefined && namesBearer(authorization)) throw TWO_CREDENTIALS;
    return { kind: 'api_key', key: apiKey };
  }
  const credential = readTokenCredential(authorization);
  return credential.kind === 'bearer' && credential.token.startsWith(API_KEY_PREFIX)
    ? { kind: 'api_key', key: credential.token }
    : credential;
}

/**
 * The credential of a request to a route that takes browser sessions
 * (`auth: session`): a bearer token or an API key when one is sent — the
 * cookie is then ignored, since a browser attaches the cookie to an app's own
 * bearer requests too — else the session cookie `cookieName` when it is in
 * the `Cookie` header(s) with a value, else none (or another scheme).
 * Cookie names compare exactly (RFC 6265 §5.4); an empty value is no cookie.
 * @throws GatewayError `invalid_token` (`two_cookies`) for two cookies of that
 *   name: one may have been set by a sibling host (cookie tossing), and
 *   picking either would let it choose the session; as {@link readCredential}
 *   otherwise
 */
export function readSessionCredential(
  authorization: string | undefined,
  apiKey: string | undefined,
  cookie: CookieHeader,
  cookieName: string,
): RequestCredential {
  if (presentsCredential(authorization, apiKey)) return readCredential(authorization, apiKey);
  const session = readSessionCookie(cookie, cookieName);
  return session ?? readCredential(authorization, apiKey);
}

/**
 * The session cookie of `Cookie` header(s), undefined when none has a value.
 * @throws GatewayError `invalid_token` (`two_cookies`) for two of that name
 */
export function readSessionCookie(
  cookie: CookieHeader,
  cookieName: string,
): SessionCredential | undefined {
  if (cookie === undefined) return undefined;
  const sole = typeof cookie === 'string' ? soleCookieValue(cookie, cookieName) : undefined;
  if (sole !== undefined) return { kind: 'session', value: sole };
  const values = cookieValues(cookie, cookieName);
  if (values.length > 1) throw twoCookies();
  const value = values[0];
  return value === undefined || value === '' ? undefined : { kind: 'session', value };
}

/**
 * The value of a `Cookie` header that is exactly one `name=value` pair, the
 * name spelled exactly, the value unquoted and not empty — the steady state
 * of a browser on an app behind the gateway — found by prefix tests, with no
 * split; undefined for any other header, which the caller reads in full
 * (`text/cookies.ts`): the same answer, dearer.
 */
export function soleCookieValue(cookie: string, name: string): string | undefined {
  const at = name.length;
  if (
    cookie.length <= at + 1 ||
    cookie.charCodeAt(at) !== EQUALS ||
    cookie.charCodeAt(at + 1) === QUOTE ||
    !cookie.startsWith(name) ||
    cookie.includes(';', at)
  )
    return undefined;
  return cookie.slice(at + 1);
}

const EQUALS = 61;
const QUOTE = 34;

/** A new error each time: the refusal is recorded on the request it answers. */
function twoCookies(): GatewayError {
  return tokenRefused(
    'two_cookies',
    'The request carries two session cookies; sign out and in again.',
  );
}

/** The b64token of a header that names the Bearer scheme. */
function bearerToken(authorization: string): string {
  const match = BEARER_TOKEN.exec(authorization);
  if (match === null) {
    throw tokenRefused('not_bearer', 'The Authorization header is not a bearer token.');
  }
  return match[1] as string;
}
