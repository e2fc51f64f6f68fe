/**
 * A back-channel logout token of a tenant's identity provider, validated as
 * OpenID Connect Back-Channel Logout 1.0 §2.6 says (issue 44):
 *
 * - a JWT signed by the issuer's keys (`issuer-keys.ts`), with the ID
 *   tokens' algorithms (asymmetric only: never `none`, never HS*), `alg` and
 *   `typ` checked before any fetch;
 * - `iss` and `aud` naming a tenant's IdP record — one issuer may serve
 *   several tenants, so the record is found by the issuer and a client id in
 *   `aud` together (`IdpStore.tenantIdByClient`), never by the issuer alone;
 * - `iat` present, not ahead of now beyond the skew and at most
 *   {@link LOGOUT_TOKEN_MAX_AGE_SECONDS} old (`exp` checked when present);
 * - `jti` present (the caller keeps it against replay for as long as the
 *   token is accepted: {@link LOGOUT_JTI_TTL_SECONDS});
 * - `events` an object with the member
 *   `http://schemas.openid.net/event/backchannel-logout`, itself an object;
 * - a `sub` or a `sid` (at least one), and no `nonce` (§2.4: so an ID token
 *   can never pass for a logout token).
 *
 * Every failure is a `GatewayError` `invalid_request` (§2.8: 400) whose
 * `detail` is one of {@link LOGOUT_REFUSALS}, for the log and the audit; the
 * provider unreachable is `unavailable` (503: it may retry).
 */
import { decodeJwt, jwtVerify, type JWTPayload } from 'jose';
import { GatewayError } from '../../errors.js';
import type { IdpStore } from '../../store/idps.js';
import { issuerOf } from './exchange.js';
import type { IssuerKeys } from './issuer-keys.js';
import { providerUnavailable, refusalOf } from './refusals.js';
import { ID_TOKEN_ALGORITHMS, joseFailure } from './verify-id-token.js';

/** §2.4: the `events` member that makes a JWT a logout token. */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/** A logout token issued longer ago than this is refused: providers send it at once. */
export const LOGOUT_TOKEN_MAX_AGE_SECONDS = 600;

/** How long a seen `jti` is kept: past it the token is refused by its age anyway. */
export const LOGOUT_JTI_TTL_SECONDS = LOGOUT_TOKEN_MAX_AGE_SECONDS + 300;

/** At most this many `aud` entries are looked up (a token naming hundreds is refused). */
const MAX_AUDIENCES = 10;

export const LOGOUT_REFUSALS = [
  /** Not a JWT, or no `iss`. */
  'malformed',
  /** `alg` not asymmetric (`none`, HS256, …), or `typ` an access token's. */
  'algorithm',
  /** No tenant's IdP record has this issuer with a client id of `aud`. */
  'unknown_issuer',
  'unknown_key',
  'bad_signature',
  /** `iat` missing, ahead, or too old; `exp` passed. */
  'expired',
  /** `aud` does not hold the record's client id, or `azp` another client. */
  'audience',
  /** `jti` missing, or too many audiences. */
  'claims',
  /** No `events` object with the back-channel logout member (an object). */
  'events',
  /** A `nonce` (§2.4: a logout token has none). */
  'nonce',
  /** Neither `sub` nor `sid`. */
  'no_subject',
  /** This `jti` was seen before. */
  'replayed',
] as const;

export type LogoutRefusal = (typeof LOGOUT_REFUSALS)[number];

/** A validated logout token: the tenant whose record it was for, and whom it names. */
export interface VerifiedLogoutToken {
  tenantId: string;
  issuer: string;
  subject?: string;
  sid?: string;
  jti: string;
}

export interface LogoutTokenDeps {
  idps: IdpStore;
  keys: IssuerKeys;
  clockSkewSeconds: number;
}

/** §2.8: one 400 `invalid_request` for every token that does not validate; `detail` says why. */
export function logoutRefused(reason: LogoutRefusal, cause?: unknown): GatewayError {
  return new GatewayError('invalid_request', 'The logout token is not valid.', {
    detail: reason,
    ...(cause === undefined ? {} : { cause }),
  });
}

/** The refusal's reason, when `err` is one of {@link logoutRefused}'s. */
export function logoutRefusalOf(err: unknown): LogoutRefusal | undefined {
  if (!(err instanceof GatewayError) || err.code !== 'invalid_request') return undefined;
  return (LOGOUT_REFUSALS as readonly string[]).includes(err.detail ?? '')
    ? (err.detail as LogoutRefusal)
    : undefined;
}

/**
 * @param seen filled with the tenant and issuer once they are known (for the audit of a refusal)
 * @throws GatewayError `invalid_request` (see the file header), `unavailable`
 */
export async function verifyLogoutToken(
  deps: LogoutTokenDeps,
  token: string,
  seen: { tenantId?: string; issuer?: string } = {},
): Promise<VerifiedLogoutToken> {
  const issuer = claimedIssuer(token);
  const found = await recordFor(deps.idps, issuer, token);
  seen.tenantId = found.tenantId;
  seen.issuer = issuer;
  let keys;
  try {
    keys = await deps.keys.keysFor(issuer);
  } catch (err) {
    throw providerUnavailable(err);
  }
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, keys, {
      algorithms: [...ID_TOKEN_ALGORITHMS],
      issuer,
      audience: found.clientId,
      clockTolerance: deps.clockSkewSeconds,
      // Also refuses an `iat` ahead of now beyond the skew.
      maxTokenAge: LOGOUT_TOKEN_MAX_AGE_SECONDS,
      requiredClaims: ['iat', 'jti'],
    }));
  } catch (err) {
    const failure = joseFailure(err);
    const reason = refusalOf(failure);
    if (reason === undefined) throw failure;
    throw logoutRefused(asLogoutRefusal(reason), err);
  }
  return { tenantId: found.tenantId, issuer, jti: payload.jti as string, ...named(payload) };
}

/** The unverified `iss`, after the header checks the exchange makes (no fetch for `none`). */
function claimedIssuer(token: string): string {
  try {
    return issuerOf(token);
  } catch (err) {
    throw logoutRefused(refusalOf(err) === 'algorithm' ? 'algorithm' : 'malformed', err);
  }
}

/** The tenant's record whose issuer is `iss` and whose client id is in `aud`. */
async function recordFor(
  idps: IdpStore,
  issuer: string,
  token: string,
): Promise<{ tenantId: string; clientId: string }> {
  const { aud } = decodeJwt(token);
  const audiences = (Array.isArray(aud) ? aud : [aud]).filter((a) => typeof a === 'string');
  if (audiences.length > MAX_AUDIENCES) throw logoutRefused('claims');
  for (const clientId of audiences) {
    const tenantId = await idps.tenantIdByClient(issuer, clientId);
    if (tenantId !== null) return { tenantId, clientId };
  }
  throw logoutRefused('unknown_issuer');
}

/** §2.4's claims past the signature: `events`, no `nonce`, a `sub` or a `sid`. */
function named(payload: JWTPayload): { subject?: string; sid?: string } {
  const events = payload['events'];
  const isObject = (value: unknown) =>
    typeof value === 'object' && value !== null && !Array.isArray(value);
  if (!isObject(events) || !isObject((events as Record<string, unknown>)[BACKCHANNEL_LOGOUT_EVENT]))
    throw logoutRefused('events');
  if (payload['nonce'] !== undefined) throw logoutRefused('nonce');
  const { sub } = payload;
  const sid = payload['sid'];
  const subject = typeof sub === 'string' && sub !== '' ? { subject: sub } : {};
  const session = typeof sid === 'string' && sid !== '' ? { sid } : {};
  if (subject.subject === undefined && session.sid === undefined) throw logoutRefused('no_subject');
  return { ...subject, ...session };
}

function asLogoutRefusal(reason: string): LogoutRefusal {
  return (LOGOUT_REFUSALS as readonly string[]).includes(reason)
    ? (reason as LogoutRefusal)
    : 'claims';
}
