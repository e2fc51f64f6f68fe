/**
 * Access tokens: JWTs in the RFC 9068 shape (`typ: at+jwt`), signed and
 * verified with jose. Verification allows only the configured algorithms and
 * keys of our own key set, so `alg: none` and HS256-with-the-public-key are
 * refused before any signature math.
 */
import { randomUUID } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT, type JWTHeaderParameters } from 'jose';
import { GatewayError } from '../../errors.js';
import type { TenantType } from '../../store/types.js';
import { isUsableKid, type KeySet, type SigningAlgorithm, type SigningKey } from './keys.js';
import { tokenRefused, type TokenRefusal } from './token-refusals.js';

export interface TokenSettings {
  issuer: string;
  audience: string;
  ttlSeconds: number;
  algorithms: SigningAlgorithm[];
  clockSkewSeconds: number;
}

/** The claims of an access token, as verified. */
export interface AccessTokenClaims {
  iss: string;
  aud: string;
  sub: string;
  tenant_id: string;
  /** Private claims, so that the proxy needs no lookup to inject identity headers. */
  tenant_type: TenantType;
  email: string;
  /** The user's session version at issue time; a password change moves it on. */
  sv: number;
  /**
   * The generation of the membership the token was issued under: the token
   * is good only while the membership has it (`Membership.generation`).
   */
  mg: number;
  /**
   * The granted scopes, space-separated and sorted (RFC 9068 §2.2.3); absent
   * in tokens issued before scopes: none. Read as `Principal.scopes`.
   */
  scope?: string;
  jti: string;
  /**
   * A machine client's token (`client-tokens.ts`): the client id (also its
   * `sub`); absent on a user's token. Such a token has no `email`, `sv` or
   * `mg` claim: the verifier gives it `''`, 0 and 0 so every reader sees one shape.
   */
  client_id?: string;
  /** A client token's generation: alive only while the client still has it. */
  cg?: number;
  /**
   * The refresh family the token was issued in (`refresh-grant.ts`): a logout
   * or an RFC 7009 revocation of the token ends the family too. Absent on a
   * token issued without a refresh token.
   */
  fid?: string;
  iat: number;
  /**
   * When the gateway stops accepting the token: the token's own `exp`, but
   * never later than `iat + tokens.ttlSeconds` (see {@link verifyAccessToken}).
   */
  exp: number;
}

/** A token that verified, and the key it verified with. */
export interface VerifiedAccessToken {
  claims: AccessTokenClaims;
  key: SigningKey;
}

export interface TokenSubject {
  userId: string;
  email: string;
  sessionVersion: number;
  tenantId: string;
  tenantType: TenantType;
  membershipGeneration: number;
  /** The scopes granted (the member's role's), space-separated and sorted; omitted: none. */
  scope?: string;
  /** The refresh family the token is issued in (`fid`); omitted: none. */
  familyId?: string;
}

/** Holds the current key set; replaced on key rotation. */
export interface KeyRing {
  current: KeySet;
  /**
   * Re-reads the key directory, where there is one. Called on a token with an
   * unknown `kid` (another replica may already sign with a key added since).
   */
  reload?: () => Promise<void>;
}

export async function issueAccessToken(
  keyring: KeyRing,
  settings: TokenSettings,
  subject: TokenSubject,
  now: number = Math.floor(Date.now() / 1000),
): Promise<{ token: string; claims: AccessTokenClaims }> {
  const key = keyring.current.signing;
  const claims: AccessTokenClaims = {
    iss: settings.issuer,
    aud: settings.audience,
    sub: subject.userId,
    tenant_id: subject.tenantId,
    tenant_type: subject.tenantType,
    email: subject.email,
    sv: subject.sessionVersion,
    mg: subject.membershipGeneration,
    ...(subject.scope === undefined ? {} : { scope: subject.scope }),
    ...(subject.familyId === undefined ? {} : { fid: subject.familyId }),
    jti: randomUUID(),
    iat: now,
    exp: now + settings.ttlSeconds,
  };
  const token = await new SignJWT({ ...claims })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'at+jwt' })
    .sign(key.privateKey);
  return { token, claims };
}

/**
 * Checks signature, algorithm, `typ`, `iss`, `aud`, `exp`/`nbf`/`iat` (with the
 * clock skew) and the shape of our claims. Session state is checked elsewhere.
 *
 * `iat` is required (RFC 9068 §2.2) and must not lie in the future beyond the
 * clock skew. A token is honoured for at most `ttlSeconds` after its `iat`
 * (plus the skew) whatever its `exp` claims: only a holder of a signing key
 * can mint a longer-lived one, and a gateway whose `ttlSeconds` was lowered
 * must not go on honouring the longer lives it issued before. The returned
 * `exp` is that effective expiry, so every cache keyed on it honours it too.
 * @throws GatewayError `invalid_token`
 */
export async function verifyAccessToken(
  keyring: KeyRing,
  settings: TokenSettings,
  token: string,
): Promise<VerifiedAccessToken> {
  const keys = keyring.current;
  let payload: Record<string, unknown>;
  let key: SigningKey | undefined;
  try {
    const result = await jwtVerify(
      token,
      (header: JWTHeaderParameters) => {
        key = keyFor(keys, header);
        return key.publicKey;
      },
      {
        algorithms: settings.algorithms,
        issuer: settings.issuer,
        audience: settings.audience,
        clockTolerance: settings.clockSkewSeconds,
        // jose checks `iat` against the clock only when a maximum age is set.
        maxTokenAge: settings.ttlSeconds,
        typ: 'at+jwt',
        requiredClaims: ['sub', 'jti', 'iat', 'exp'],
      },
    );
    payload = result.payload;
  } catch (err) {
    // Ours, from the key lookup: already the refusal, with its reason.
    if (err instanceof GatewayError) throw err;
    const { reason, description } = joseRefusal(err);
    throw tokenRefused(reason, description, { cause: err });
  }
  const claims = checkClaimShapes(payload);
  return {
    claims: { ...claims, exp: Math.min(claims.exp, claims.iat + settings.ttlSeconds) },
    key: key as SigningKey,
  };
}

/**
 * A usable `kid` not in the key set: the one refusal a key reload could
 * change. A token with no `kid`, or one no key file could be named, is a
 * plain `invalid_token`, so it never costs a directory read.
 */
export class UnknownKeyError extends GatewayError {
  constructor() {
    super('invalid_token', NOT_OUR_KEY, { detail: 'unknown_kid' });
  }
}

const NOT_OUR_KEY = 'The token was not signed by a known key.';

function keyFor(keys: KeySet, header: JWTHeaderParameters): SigningKey {
  if (!isUsableKid(header.kid)) throw tokenRefused('unknown_kid', NOT_OUR_KEY);
  const key = keys.byKid.get(header.kid);
  if (key === undefined) throw new UnknownKeyError();
  if (key.alg !== header.alg) throw tokenRefused('wrong_alg', NOT_OUR_KEY);
  return key;
}

function checkClaimShapes(payload: Record<string, unknown>): AccessTokenClaims {
  if (payload.client_id !== undefined) return checkClientClaimShapes(payload);
  const { sub, tenant_id, tenant_type, email, sv, mg, jti, aud, scope, fid } = payload;
  const ok =
    typeof sub === 'string' &&
    typeof tenant_id === 'string' &&
    (tenant_type === 'usertenant' || tenant_type === 'orgtenant') &&
    typeof email === 'string' &&
    Number.isSafeInteger(sv) &&
    // Tokens of versions before membership generations have none: refused (fail closed).
    Number.isSafeInteger(mg) &&
    (mg as number) > 0 &&
    typeof jti === 'string' &&
    typeof aud === 'string' &&
    (scope === undefined || typeof scope === 'string') &&
    (fid === undefined || typeof fid === 'string');
  if (!ok) throw tokenRefused('claims', 'The token lacks required claims.');
  return payload as unknown as AccessTokenClaims;
}

/** A client token: `sub` is the client id, `cg` its generation; `scope` a string when present. */
function checkClientClaimShapes(payload: Record<string, unknown>): AccessTokenClaims {
  const { sub, client_id, tenant_id, tenant_type, cg, scope, jti, aud } = payload;
  const ok =
    typeof client_id === 'string' &&
    sub === client_id &&
    typeof tenant_id === 'string' &&
    (tenant_type === 'usertenant' || tenant_type === 'orgtenant') &&
    Number.isSafeInteger(cg) &&
    (cg as number) > 0 &&
    (scope === undefined || typeof scope === 'string') &&
    typeof jti === 'string' &&
    typeof aud === 'string';
  if (!ok) throw tokenRefused('claims', 'The token lacks required claims.');
  return { ...(payload as unknown as AccessTokenClaims), email: '', sv: 0, mg: 0 };
}

/**
 * Maps jose's errors by class and `code` (never message text) to the reason
 * for the log and the description for the client.
 */
function joseRefusal(err: unknown): { reason: TokenRefusal; description: string } {
  if (err instanceof joseErrors.JWTExpired)
    return { reason: 'expired', description: 'The token has expired.' };
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    return {
      reason: err.reason === 'check_failed' ? (CLAIM_REFUSALS[err.claim] ?? 'claims') : 'claims',
      description: `The token's ${err.claim} claim is not acceptable.`,
    };
  }
  switch ((err as { code?: string }).code) {
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return {
        reason: 'wrong_alg',
        description: 'The token is signed with an algorithm that is not accepted.',
      };
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return { reason: 'bad_signature', description: 'The token signature is not valid.' };
    default:
      return { reason: 'malformed', description: 'The token is malformed.' };
  }
}

/**
 * A claim jose checked and found wrong (`reason: 'check_failed'`); a claim
 * missing or of the wrong type is `claims`. (`exp`, and `iat` older than
 * the maximum age, are `JWTExpired`.)
 */
const CLAIM_REFUSALS: Partial<Record<string, TokenRefusal>> = {
  iss: 'wrong_issuer',
  aud: 'wrong_audience',
  typ: 'wrong_type',
  nbf: 'not_yet_valid',
  iat: 'issued_in_future',
};
