/**
 * A session's claims and principal, made of its record: the same claims a
 * token of that sign-in would carry (`sub`, `tenant_id`, `sv`, `mg`; `jti`
 * the session id, `exp` its absolute end), so the session guard judges a
 * session exactly as it judges a token. The scopes are the role's as
 * `authorization.roles` says now: a reload that takes a scope from a role
 * takes it from the role's live sessions at their next request.
 */
import type { BrowserSessionRecord } from '../../store/browser-sessions.js';
import type { MemberRole, TenantType } from '../../store/types.js';
import type { RoleScopes } from '../accounts.js';
import type { AccessTokenClaims, TokenSettings } from '../tokens/tokens.js';
import type { SessionPrincipal } from './browser-sessions.js';

const NO_SCOPES: readonly string[] = Object.freeze([]);

/** The scopes of `role` in `roles`: sorted, each once, frozen; an unknown role has none. */
export function roleScopesOf(roles: RoleScopes['current'], role: string): readonly string[] {
  const scopes = Object.hasOwn(roles, role) ? roles[role as MemberRole] : [];
  if (scopes.length === 0) return NO_SCOPES;
  return Object.freeze([...new Set(scopes)].sort());
}

/** The claims the session guard judges; frozen, and made once per record and roles. */
export function sessionClaims(
  session: BrowserSessionRecord,
  tenantType: TenantType,
  scopes: readonly string[],
  tokens: Pick<TokenSettings, 'issuer' | 'audience'>,
): AccessTokenClaims {
  return Object.freeze({
    iss: tokens.issuer,
    aud: tokens.audience,
    sub: session.userId,
    tenant_id: session.tenantId,
    tenant_type: tenantType,
    email: session.email,
    sv: session.sessionVersion,
    mg: session.membershipGeneration,
    scope: scopes.join(' '),
    jti: session.sessionId,
    iat: session.createdAt,
    exp: session.absoluteExpiresAt,
  });
}

/** The principal of a session's claims (frozen: it is shared by every request of the session). */
export function sessionPrincipal(
  claims: AccessTokenClaims,
  scopes: readonly string[],
): SessionPrincipal {
  return Object.freeze({
    kind: 'session',
    userId: claims.sub,
    email: claims.email,
    tenantId: claims.tenant_id,
    tenantType: claims.tenant_type,
    scopes,
    sessionId: claims.jti,
    claims,
  });
}
