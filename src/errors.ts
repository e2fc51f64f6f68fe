/**
 * The one error type of the gateway. Every refusal carries a stable `code`
 * (the `error` field of every error body) and its HTTP status; callers switch
 * on `code`, never on message text. Rendering happens in one place:
 * {@link errorResponse}.
 */

/** Every CODE the gateway answers with, and its HTTP status: the one list (OpenAPI reads it too). */
const STATUS = {
  invalid_request: 400,
  /** An IdP names an e-mail domain its tenant has not verified, or a domain's TXT challenge was not found. */
  domain_not_verified: 400,
  /** OAuth token endpoint (RFC 6749 §5.2). */
  invalid_scope: 400,
  /** OAuth token endpoint: a refresh token unknown, used up, expired, or of an ended session. */
  invalid_grant: 400,
  unsupported_grant_type: 400,
  invalid_credentials: 401,
  invalid_token: 401,
  /** OAuth token endpoint: unknown client, wrong secret, expired client. */
  invalid_client: 401,
  tenant_access_denied: 403,
  tenant_mismatch: 403,
  insufficient_scope: 403,
  forbidden: 403,
  /** An unsafe request (or a WebSocket upgrade) admitted by a session cookie, not from the same origin. */
  csrf_refused: 403,
  /** A password sign-in before the address is verified (`signup.verifyEmail`). */
  email_not_verified: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  user_exists: 409,
  /** Another tenant's identity provider has this issuer and client id. */
  issuer_in_use: 409,
  /** Another tenant has verified this domain. */
  domain_taken: 409,
  payload_too_large: 413,
  expectation_failed: 417,
  too_many_requests: 429,
  headers_too_large: 431,
  internal_error: 500,
  not_implemented: 501,
  bad_gateway: 502,
  unavailable: 503,
  gateway_timeout: 504,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof STATUS;

/** Every error CODE, in the order of their statuses. */
export const ERROR_CODES = Object.keys(STATUS) as readonly ErrorCode[];

/** The realm named in `WWW-Authenticate` for Basic challenges. */
export const BASIC_REALM = 'tenant-gateway';

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Extra response headers, e.g. `Retry-After` or `Allow`. */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * For the log, never the client: what refines `code` — why a token was
   * refused (`invalid_token`: a `TokenRefusal`), the tenant a refused
   * request named (`tenant_mismatch`, `tenant_access_denied`).
   */
  readonly detail: string | undefined;
  /**
   * Where a browser should go instead (a relative URL): the refusal is then
   * answered 302 with `Location`, its code kept for the log and the metrics.
   * A page load without a session is sent to sign in so
   * (`proxy/decide/sign-in-redirect.ts`).
   */
  readonly redirect: string | undefined;

  constructor(
    code: ErrorCode,
    description: string,
    options: {
      headers?: Record<string, string>;
      cause?: unknown;
      detail?: string;
      redirect?: string;
    } = {},
  ) {
    super(description, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.redirect = options.redirect;
    this.status = options.redirect === undefined ? STATUS[code] : 302;
    this.headers = options.headers ?? {};
    this.detail = options.detail;
  }
}

export function isGatewayError(value: unknown): value is GatewayError {
  return value instanceof GatewayError;
}

/** A rendered error: what goes on the wire. */
export interface ErrorResponse {
  code: ErrorCode;
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Turns any thrown value into the JSON error body. Unknown errors
 * become a 500 `internal_error` whose text says nothing about the cause: the
 * caller logs the original.
 */
export function errorResponse(err: unknown): ErrorResponse {
  const error = isGatewayError(err)
    ? err
    : new GatewayError('internal_error', 'The gateway failed to handle this request.');
  const headers: Record<string, string> = {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    // A redirect is no challenge: the browser follows it to sign in.
    ...(error.redirect === undefined ? challengeFor(error.code) : { location: error.redirect }),
    ...error.headers,
  };
  // Ends with a newline: `curl` then leaves the shell prompt on a line of its own.
  const body = `${JSON.stringify({ error: error.code, error_description: error.message })}\n`;
  headers['content-length'] = String(Buffer.byteLength(body));
  return { code: error.code, status: error.status, headers, body };
}

function challengeFor(code: ErrorCode): Record<string, string> {
  if (code === 'invalid_credentials' || code === 'invalid_client') {
    return { 'www-authenticate': `Basic realm="${BASIC_REALM}"` };
  }
  if (code === 'invalid_token') {
    return { 'www-authenticate': 'Bearer error="invalid_token"' };
  }
  return {};
}
