/**
 * Removing a user or an org tenant (with its machine clients) from Redis. What to remove is
 * read first (a user's tenants, a tenant's members: their keys must be named
 * to the script, as Redis Cluster requires), then one script checks that it
 * is still so and removes it all, publishing `membership-removed` for each
 * membership in the same step. A read gone stale (a membership added in
 * between) is read again.
 */
import { GatewayError } from '../errors.js';
import { compareIds } from './normalise.js';
import type { RedisKeys } from './redis-keys.js';
import { REMOVAL_STALE, type ScriptedRedis } from './redis-scripts.js';

/** Rounds a removal gets: memberships change rarely and by hand, so a few suffice. */
const REMOVAL_ATTEMPTS = 5;

/** What a removal ended: the other side of each membership, and the generation it took. */
export interface Removed {
  /** Sorted. */
  ended: string[];
  generation: number;
  /** An org tenant's removal: the machine clients removed with it. */
  clients?: string[];
}

/**
 * Removes the user, their e-mail, personal tenant, memberships and passkeys.
 * @returns the ids of the tenants they were a member of; null when there is
 * no such user.
 * @throws GatewayError `unavailable` when every round went stale; Redis errors as they come.
 */
export function removeUserRecords(
  redis: ScriptedRedis,
  keys: RedisKeys,
  userId: string,
): Promise<Removed | null> {
  return untilSettled(async () => {
    const [email, personal] = await redis.hmget(keys.user(userId), 'email', 'personalTenantId');
    if (email === null || email === undefined || personal === null || personal === undefined) {
      return null;
    }
    const tenantIds = (await redis.smembers(keys.userTenants(userId))).sort(compareIds);
    const credentialIds = await redis.smembers(keys.passkeysOf(userId));
    const removalKeys = [
      keys.user(userId),
      keys.email(email),
      keys.users,
      keys.tenants,
      keys.userTenants(userId),
      keys.tenant(personal),
      keys.tenantMembers(personal),
      keys.generation,
      ...tenantIds.map((id) => keys.tenantMembers(id)),
      ...tenantIds.map((id) => keys.membership(id, userId)),
      keys.passkeysOf(userId),
      ...credentialIds.map((id) => keys.passkey(id)),
    ];
    const reply = await redis.removeUser(
      removalKeys.length,
      ...removalKeys,
      userId,
      email,
      personal,
      keys.sessionChannel,
      tenantIds.length,
      ...tenantIds,
      ...credentialIds,
    );
    return settled(reply, tenantIds);
  });
}

/**
 * Removes an org tenant, its memberships, its machine clients and their
 * keys, and its identity provider.
 * @returns the ids of its members; null when there is no org tenant with
 * this id.
 * @throws GatewayError `unavailable` when every round went stale; Redis errors as they come.
 */
export function removeOrgTenantRecords(
  redis: ScriptedRedis,
  keys: RedisKeys,
  tenantId: string,
): Promise<Removed | null> {
  return untilSettled(async () => {
    const members = (await redis.smembers(keys.tenantMembers(tenantId))).sort(compareIds);
    const clients = await tenantClients(redis, keys, tenantId);
    const removalKeys = [
      keys.tenant(tenantId),
      keys.tenantMembers(tenantId),
      keys.tenants,
      keys.generation,
      keys.tenantClients(tenantId),
      ...members.map((id) => keys.userTenants(id)),
      ...members.map((id) => keys.membership(tenantId, id)),
      ...clients.flatMap(({ clientId, keyIds }) => [
        keys.client(clientId),
        keys.clientKeys(clientId),
        ...keyIds.map((id) => keys.apiKey(id)),
      ]),
      keys.idp(tenantId),
      keys.idpClients,
      keys.tenantDomains(tenantId),
      keys.verifiedDomains,
    ];
    const reply = await redis.removeOrgTenant(
      removalKeys.length,
      ...removalKeys,
      tenantId,
      keys.sessionChannel,
      members.length,
      ...members,
      clients.length,
      ...clients.flatMap(({ clientId, keyIds }) => [clientId, keyIds.length, ...keyIds]),
    );
    const removed = settled(reply, members);
    return removed ? { ...removed, clients: clients.map(({ clientId }) => clientId) } : removed;
  });
}

/** The tenant's clients and the ids of their keys, as read now. */
async function tenantClients(
  redis: ScriptedRedis,
  keys: RedisKeys,
  tenantId: string,
): Promise<{ clientId: string; keyIds: string[] }[]> {
  const clientIds = (await redis.smembers(keys.tenantClients(tenantId))).sort(compareIds);
  return Promise.all(
    clientIds.map(async (clientId) => ({
      clientId,
      keyIds: (await redis.smembers(keys.clientKeys(clientId))).sort(compareIds),
    })),
  );
}

/** A removal script's reply: `undefined` when stale (read again). */
function settled(reply: unknown, ended: string[]): Removed | null | undefined {
  if (reply === REMOVAL_STALE) return undefined;
  return typeof reply === 'number' && reply > 0 ? { ended, generation: reply } : null;
}

export async function untilSettled<T>(round: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < REMOVAL_ATTEMPTS; i++) {
    const result = await round();
    if (result !== undefined) return result;
  }
  throw new GatewayError('unavailable', 'The store kept changing during the removal; retry.');
}
