/**
 * An ID token of a tenant's provider, verified against that provider only
 * (OpenID Connect Core §3.1.3.7): an asymmetric signature by one of its keys,
 * `iss` exactly its issuer, `aud` naming the tenant's client id (and `azp`
 * that client when present or when there are several audiences), `exp` and
 * `iat` within the skew, a `sub`, and an `email` the provider says it has
 * verified (`email_verified`, or Entra ID's `xms_edov`), in one of the
 * tenant's domains. There is no `nonce` to compare in
 * an exchange (the client's own sign-in had it); the token is a bearer
 * credential until its `exp`.
 */
import { errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { TenantIdp } from '../../store/types.js';
import { providerUnavailable, refused, type FederationRefusal } from './refusals.js';

/** Asymmetric only: never `none`, never HS* (a provider's public key is no secret). */
export const ID_TOKEN_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const;

/** An ID token issued longer ago than this is refused, whatever its `exp`. */
export const MAX_ID_TOKEN_AGE_SECONDS = 86_400;

export interface VerifiedIdentity {
  issuer: string;
  subject: string;
  /** Lower-case. */
  email: string;
  /** The `nonce` claim, when a string (the browser sign-in compares it). */
  nonce?: string;
  /** The provider's session id (`sid`, OIDC Back-Channel Logout 1.0 §2.1), when a string. */
  sid?: string;
}

/** What was verified before a refusal, for the audit: the e-mail once the signature held. */
export interface Seen {
  email?: string;
}

export async function verifyIdToken(
  token: string,
  idp: Pick<TenantIdp, 'issuer' | 'clientId' | 'domains'>,
  keys: JWTVerifyGetKey,
  clockSkewSeconds: number,
  seen: Seen = {},
): Promise<VerifiedIdentity> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, keys, {
      algorithms: [...ID_TOKEN_ALGORITHMS],
      issuer: idp.issuer,
      audience: idp.clientId,
      clockTolerance: clockSkewSeconds,
      // Also refuses an `iat` ahead of now (jose checks it only with a maximum age).
      maxTokenAge: MAX_ID_TOKEN_AGE_SECONDS,
      requiredClaims: ['sub', 'iat', 'exp'],
    }));
  } catch (err) {
    throw joseFailure(err);
  }
  const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  const azp = payload['azp'];
  if ((azp !== undefined || audiences.length > 1) && azp !== idp.clientId)
    throw refused('audience');
  const email = payload['email'];
  if (typeof payload.sub !== 'string' || typeof email !== 'string') throw refused('claims');
  const lower = email.trim().toLowerCase();
  seen.email = lower;
  if (!emailVerified(payload)) throw refused('email_not_verified');
  const domain = lower.slice(lower.lastIndexOf('@') + 1);
  if (!lower.includes('@') || !idp.domains.includes(domain)) throw refused('domain_not_allowed');
  const nonce = typeof payload['nonce'] === 'string' ? { nonce: payload['nonce'] } : {};
  const sid = typeof payload['sid'] === 'string' ? { sid: payload['sid'] } : {};
  return { issuer: idp.issuer, subject: payload.sub, email: lower, ...nonce, ...sid };
}

/**
 * `email_verified: true`; or, from a token without `email_verified` at all,
 * `xms_edov: true` — Microsoft Entra ID never sends `email_verified` for
 * work accounts and says instead, in this optional claim, that the address's
 * domain is one the user's directory has verified.
 */
function emailVerified(payload: JWTPayload): boolean {
  if (payload['email_verified'] !== undefined) return payload['email_verified'] === true;
  return payload['xms_edov'] === true;
}

/**
 * jose's failures by their `code`: the token's fault → a refusal; the
 * provider's → 503. Shared with the logout token (`logout-token.ts`).
 */
export function joseFailure(err: unknown): Error {
  if (!(err instanceof errors.JOSEError)) return providerUnavailable(err);
  const reason = REFUSAL_OF_CODE[err.code];
  if (reason !== undefined) return refused(reason, err);
  if (err instanceof errors.JWTClaimValidationFailed) return refused(claimRefusal(err.claim), err);
  // ERR_JWKS_TIMEOUT, ERR_JWKS_INVALID, ERR_JOSE_GENERIC (the JWKS answer was not a 200 …).
  return providerUnavailable(err);
}

const REFUSAL_OF_CODE: Readonly<Record<string, FederationRefusal>> = {
  ERR_JWS_INVALID: 'malformed',
  ERR_JWT_INVALID: 'malformed',
  ERR_JOSE_NOT_SUPPORTED: 'algorithm',
  ERR_JOSE_ALG_NOT_ALLOWED: 'algorithm',
  ERR_JWKS_NO_MATCHING_KEY: 'unknown_key',
  ERR_JWKS_MULTIPLE_MATCHING_KEYS: 'unknown_key',
  ERR_JWS_SIGNATURE_VERIFICATION_FAILED: 'bad_signature',
  ERR_JWT_EXPIRED: 'expired',
};

function claimRefusal(claim: string): FederationRefusal {
  if (claim === 'aud') return 'audience';
  if (claim === 'iss') return 'unknown_issuer';
  if (claim === 'nbf' || claim === 'iat') return 'expired';
  return 'claims';
}
