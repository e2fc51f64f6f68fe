/**
 * `authenticate`: bearer → principal. The one function behind the api's Bearer
 * endpoints, the proxy and forward-auth, so their verdicts can never differ;
 * routes also take API keys ({@link createRequestAuthenticator}).
 */
import type { TenantType } from '../../store/types.js';
import { dueBearerToken } from './bearer.js';
import { EXACT_BEARER_PREFIX, isExactBearer, readTokenCredential } from './read-credential.js';
import type { SessionGuard } from '../revocation/sessions.js';
import type { SessionPrincipal } from '../sessions/browser-sessions.js';
import type { AccessTokenClaims } from '../tokens/tokens.js';
import type { TokenVerifier } from '../tokens/verified-tokens.js';

/** What every principal says: who, for which tenant, with what scopes. */
interface PrincipalBase {
  /** The user id; for a client or its key, the client id (per-user limits count a client as its own user). */
  userId: string;
  /** '' for a client or its key. */
  email: string;
  /** The client id, for a client or its key only. */
  clientId?: string;
  tenantId: string;
  tenantType: TenantType;
  /** The granted scopes, sorted, each once, frozen; none: []. */
  scopes: readonly string[];
}

/** Who a request acts for, as proven by its bearer token: a user's, or a machine client's (client credentials). */
export interface TokenPrincipal extends PrincipalBase {
  kind: 'user' | 'client';
  claims: AccessTokenClaims;
}

/** A machine client, as proven by one of its API keys (`api-keys.ts`); its scopes are the client's. */
export interface ApiKeyPrincipal extends PrincipalBase {
  kind: 'api_key';
  clientId: string;
  /** `tgkid_…`: the key's public id. */
  keyId: string;
  /** When the key (or its client) stops working, Unix seconds; undefined: never. */
  expiresAt: number | undefined;
}

/**
 * Who a request acts for. The api's Bearer endpoints take tokens only; routes
 * take API keys too, and `auth: session` routes browser sessions
 * (`session-credentials.ts`): a session's principal is a user's, with the
 * session's id.
 */
export type Principal = TokenPrincipal | ApiKeyPrincipal | SessionPrincipal;

/** What kind of principal a request acts for: a label of the request metrics, never an id. */
export type PrincipalKind = Principal['kind'];

/**
 * Answers synchronously when both caches know the token (the steady state of
 * proxied traffic: no await, no promise), else with a promise.
 */
export type Authenticate = (
  authorization: string | undefined,
) => TokenPrincipal | Promise<TokenPrincipal>;

export function createAuthenticator(deps: {
  tokens: TokenVerifier;
  sessions: SessionGuard;
}): Authenticate {
  const { tokens, sessions } = deps;
  const slowly = async (token: string): Promise<TokenPrincipal> => {
    const claims = await tokens.verify(token);
    await sessions.assertAlive(claims);
    return principalOf(claims);
  };
  return (authorization) => {
    const claims = peekExactBearer(tokens, authorization);
    if (claims !== undefined && sessions.aliveFromCache(claims)) return principalOf(claims);
    return slowly(dueBearerToken(readTokenCredential(authorization)));
  };
}

/**
 * The proxy path's steady state: `Bearer <token>` spelled exactly, with a
 * token verified before — the reader's answer for it ({@link isExactBearer}:
 * only tokens that parsed and verified are cached), so a hit needs no
 * reading; any other spelling is read in full.
 */
function peekExactBearer(
  tokens: TokenVerifier,
  authorization: string | undefined,
): AccessTokenClaims | undefined {
  if (!isExactBearer(authorization, false)) return undefined;
  return tokens.peek((authorization as string).slice(EXACT_BEARER_PREFIX.length));
}

/**
 * The principal of verified claims, made once per claims object: the
 * verifier caches the claims object itself, so a request of the steady state
 * reuses the principal (frozen: it is shared) and allocates nothing here.
 */
const principals = new WeakMap<AccessTokenClaims, TokenPrincipal>();

function principalOf(claims: AccessTokenClaims): TokenPrincipal {
  let principal = principals.get(claims);
  if (principal === undefined) {
    principal = Object.freeze(newPrincipal(claims));
    principals.set(claims, principal);
  }
  return principal;
}

function newPrincipal(claims: AccessTokenClaims): TokenPrincipal {
  if (claims.client_id !== undefined) {
    return {
      kind: 'client',
      userId: claims.client_id,
      email: '',
      clientId: claims.client_id,
      tenantId: claims.tenant_id,
      tenantType: claims.tenant_type,
      scopes: scopesOf(claims),
      claims,
    };
  }
  return {
    kind: 'user',
    userId: claims.sub,
    email: claims.email,
    tenantId: claims.tenant_id,
    tenantType: claims.tenant_type,
    scopes: scopesOf(claims),
    claims,
  };
}

const NO_SCOPES: readonly string[] = Object.freeze([]);

/** The claims' scopes: sorted, each once, frozen. */
function scopesOf(claims: AccessTokenClaims): readonly string[] {
  if (claims.scope === undefined || claims.scope === '') return NO_SCOPES;
  return Object.freeze([...new Set(claims.scope.split(' ').filter(Boolean))].sort());
}
