/**
 * Why a token exchange was refused or failed: one stable reason each, for the
 * log, the audit event and the metric. The client is told none of them (one
 * `invalid_grant` for every refusal: no oracle for which check a forged token
 * failed); `unavailable` is the provider's fault, not the token's.
 */
import { GatewayError } from '../../errors.js';

export const FEDERATION_REFUSALS = [
  /** The tenant has no identity provider (or does not exist). */
  'no_provider',
  /** `iss` (with the token's client) is another tenant's provider, not this tenant's. */
  'foreign_issuer',
  /** `iss` (with the token's client) is no tenant's provider (a trailing slash or letter case is enough). */
  'unknown_issuer',
  /** Not a JWT, or no `iss`. */
  'malformed',
  /** `alg` not asymmetric (`none`, HS256, …), or `typ` says an access token. */
  'algorithm',
  /** No key of the provider has the token's `kid` (after the one refetch allowed). */
  'unknown_key',
  'bad_signature',
  /** `exp` passed, `nbf`/`iat` ahead (beyond the skew). */
  'expired',
  /** `aud` lacks the tenant's client id, or `azp` is another client. */
  'audience',
  /** `sub`, `email`, `iat` or `exp` missing or not of their type. */
  'claims',
  'email_not_verified',
  /** The e-mail's domain is not in the record, or not one the tenant has verified now. */
  'domain_not_allowed',
  /** The user is disabled. */
  'user_disabled',
  /** A local user not a member, and the provider may not link them. */
  'not_linked',
  /** Browser sign-in: the provider refused the authorization code, or answered no ID token. */
  'code_refused',
  /** Browser sign-in: the ID token's `nonce` is not the one its sign-in sent. */
  'nonce',
] as const;

export type FederationRefusal = (typeof FEDERATION_REFUSALS)[number];

/** What `tenant_gateway_federated_sign_ins_total` counts, beside the refusals. */
export const FEDERATION_SUCCESSES = ['signed_in', 'user_created', 'member_joined'] as const;

export type FederationOutcome =
  (typeof FEDERATION_SUCCESSES)[number] | FederationRefusal | 'unavailable';

export const FEDERATION_OUTCOMES: readonly FederationOutcome[] = [
  ...FEDERATION_SUCCESSES,
  ...FEDERATION_REFUSALS,
  'unavailable',
];

/** The one answer to every refused subject token (RFC 8693 §2.2.2: `invalid_grant`). */
export function refused(reason: FederationRefusal, cause?: unknown): GatewayError {
  return new GatewayError('invalid_grant', 'The subject token is not accepted for this tenant.', {
    detail: reason,
    ...(cause === undefined ? {} : { cause }),
  });
}

/** The provider's discovery document or keys could not be had: 503, the client may retry. */
export function providerUnavailable(cause: unknown): GatewayError {
  return new GatewayError(
    'unavailable',
    "The tenant's identity provider could not be reached; try again later.",
    { detail: 'idp_unreachable', cause },
  );
}

export function refusalOf(err: unknown): FederationRefusal | undefined {
  if (!(err instanceof GatewayError) || err.code !== 'invalid_grant') return undefined;
  return (FEDERATION_REFUSALS as readonly string[]).includes(err.detail ?? '')
    ? (err.detail as FederationRefusal)
    : undefined;
}
