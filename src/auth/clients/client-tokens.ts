/**
 * Machine clients' access tokens: the RFC 9068 shape of user tokens, signed
 * by the same keys and verified by the same verifier (`tokens.ts`), with
 * `sub` = `client_id` = the client id, the granted `scope` and the client's
 * generation `cg` (the token is alive only while the client still has it).
 */
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import type { ClientRecord } from '../../store/types.js';
import type { AccessTokenClaims, KeyRing, TokenSettings } from '../tokens/tokens.js';

export async function issueClientToken(
  keyring: KeyRing,
  settings: TokenSettings,
  client: ClientRecord,
  scopes: readonly string[],
  now: number = Math.floor(Date.now() / 1000),
): Promise<{ token: string; claims: AccessTokenClaims }> {
  const key = keyring.current.signing;
  // Never outlives the client.
  const exp = Math.min(now + settings.ttlSeconds, client.expiresAt ?? Number.MAX_SAFE_INTEGER);
  const payload = {
    iss: settings.issuer,
    aud: settings.audience,
    sub: client.clientId,
    client_id: client.clientId,
    tenant_id: client.tenantId,
    tenant_type: 'orgtenant' as const,
    scope: scopes.join(' '),
    cg: client.generation,
    jti: randomUUID(),
    iat: now,
    exp,
  };
  const token = await new SignJWT({ ...payload })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'at+jwt' })
    .sign(key.privateKey);
  return { token, claims: { ...payload, email: '', sv: 0, mg: 0 } };
}
