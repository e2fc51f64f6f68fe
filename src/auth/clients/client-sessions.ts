/**
 * Liveness of machine clients' tokens, for the session guard (`sessions.ts`):
 * a client token is alive while its `jti` is not revoked, its client exists
 * with the generation the token carries (`cg`: a rotation or removal takes a
 * new one) and has not expired. A client goes with its tenant (the store
 * removes both in one write), so an existing client means an existing tenant.
 * What the store says is cached like a user's state and forgotten on the
 * store's `client-changed` event, which a rotation or removal publishes (and,
 * in lease mode, confirms with every instance before it resolves).
 */
import type { Store } from '../../store/types.js';
import type { ClientLiveness, SessionCache } from '../revocation/session-cache.js';
import { tokenRefused } from '../tokens/token-refusals.js';
import type { AccessTokenClaims } from '../tokens/tokens.js';

export interface ClientSessionState {
  revoked: boolean;
  client: ClientLiveness;
}

export const isClientToken = (claims: AccessTokenClaims): boolean => claims.client_id !== undefined;

/** @throws GatewayError `invalid_token` when the token is dead. */
export function judgeClient(
  claims: AccessTokenClaims,
  state: ClientSessionState,
  now: number = Date.now() / 1000,
): void {
  if (state.revoked) throw tokenRefused('revoked', 'The token has been revoked.');
  const { client } = state;
  if (client === null || client.generation !== claims.cg) {
    throw tokenRefused(
      'client_ended',
      'The client the token was issued to was removed or rotated.',
    );
  }
  if (client.expiresAt !== undefined && client.expiresAt <= now) {
    throw tokenRefused('client_ended', 'The client the token was issued to has expired.');
  }
}

/** What the cache may say of a client token: the parts it cannot say are undefined. */
export function cachedClientState(
  cache: SessionCache,
  claims: AccessTokenClaims,
): Partial<ClientSessionState> {
  if (!cache.trusted()) return {};
  return {
    revoked: cache.revocations.get(claims.jti),
    client: cache.clients.get(claims.client_id as string)?.client,
  };
}

export const completeClientState = (
  state: Partial<ClientSessionState>,
): state is ClientSessionState => state.revoked !== undefined && state.client !== undefined;

/** The client token's state: from the cache when it can tell, else from the store (then kept). */
export async function readClientState(
  store: Pick<Store, 'clients' | 'revocations'>,
  cache: SessionCache,
  claims: AccessTokenClaims,
  ttlMs: number,
): Promise<ClientSessionState> {
  const state = cachedClientState(cache, claims);
  if (completeClientState(state)) {
    cache.hits++;
    return state;
  }
  cache.misses++;
  const started = cache.epoch;
  const clientId = claims.client_id as string;
  const [revoked, client] = await Promise.all([
    state.revoked ?? store.revocations.isTokenRevoked(claims.jti),
    state.client !== undefined
      ? state.client
      : store.clients.getClient(clientId).then((record): ClientLiveness =>
          // A client of another tenant under the id (never: ids are random) counts as none.
          record === null || record.tenantId !== claims.tenant_id
            ? null
            : { generation: record.generation, expiresAt: record.expiresAt },
        ),
  ]);
  // A read started before an event may predate it: not kept.
  if (cache.live && cache.epoch === started) {
    cache.revocations.set(claims.jti, revoked, { ttl: ttlMs });
    cache.clients.set(clientId, { client });
  }
  return { revoked, client };
}
