/**
 * The Redis store's machine clients (see `redis-context.ts`; layout in
 * `redis-keys.ts`). Every write is one script in the `{dir}` slot that takes
 * the next generation, and is answered once a replica has it.
 */
import { GatewayError } from '../errors.js';
import { compareIds, normaliseScopes } from './normalise.js';
import { attempt } from './redis-attempt.js';
import { CLIENT_ID_TAKEN, CLIENT_STALE } from './redis-client-scripts.js';
import { unexpectedReply, type RedisStoreContext } from './redis-context.js';
import { clientFromHash, clientHashArguments, hashFromReply } from './redis-records.js';
import { untilSettled } from './redis-removals.js';
import type { ClientStore } from './clients.js';
import type { ClientRecord, NewClient } from './types.js';

export function redisClients(context: RedisStoreContext): ClientStore {
  const { redis, keys } = context;
  const readClient = async (clientId: string) =>
    clientFromHash(await attempt(() => redis.hgetall(keys.client(clientId))));
  return {
    createClient: (client) => createClient(context, client),
    getClient: readClient,
    listClients: async (tenantId) => {
      const ids = await attempt(() => redis.smembers(keys.tenantClients(tenantId)));
      const hashes = await attempt(() =>
        Promise.all(ids.map((id) => redis.hgetall(keys.client(id)))),
      );
      return hashes
        .flatMap((hash) => clientFromHash(hash) ?? [])
        .sort((a, b) => compareIds(a.clientId, b.clientId));
    },
    rotateClientSecret: async (clientId, secretDigest, now) => {
      const reply = await attempt(() =>
        redis.rotateClientSecret(
          keys.client(clientId),
          keys.generation,
          secretDigest,
          now,
          keys.sessionChannel,
          clientId,
        ),
      );
      const client = clientFromHash(hashFromReply(reply));
      if (client !== null) {
        context.tellWatchers({ kind: 'client-changed', clientId });
        await context.replicated(keys.client(clientId));
      }
      return client;
    },
    removeClient: async (clientId) => {
      const removed = await attempt(() => untilSettled(() => removeClientRound(context, clientId)));
      if (removed !== null) {
        context.tellWatchers({ kind: 'client-changed', clientId });
        await context.replicated(keys.client(clientId));
      }
      return removed;
    },
  };
}

async function createClient(
  context: RedisStoreContext,
  input: NewClient,
): Promise<ClientRecord | null> {
  const { redis, keys } = context;
  const client = { ...input, scopes: normaliseScopes(input.scopes) };
  const reply = await attempt(() =>
    redis.createClient(
      keys.tenant(client.tenantId),
      keys.client(client.clientId),
      keys.tenantClients(client.tenantId),
      keys.generation,
      client.clientId,
      ...clientHashArguments(client),
    ),
  );
  const generation = Number(reply);
  if (generation === 0) return null;
  if (generation === CLIENT_ID_TAKEN) {
    throw new GatewayError('internal_error', 'The client id is already in use.');
  }
  if (!Number.isSafeInteger(generation) || generation < 0) throw unexpectedReply();
  await context.replicated(keys.client(client.clientId));
  const record: ClientRecord = { ...client, generation };
  if (record.expiresAt === undefined) delete record.expiresAt;
  return record;
}

/**
 * One attempt at removing a client and its keys: null when there is no such
 * client, undefined when its keys changed meanwhile (read again).
 */
async function removeClientRound(
  { redis, keys }: RedisStoreContext,
  clientId: string,
): Promise<string[] | null | undefined> {
  const tenantId = await redis.hget(keys.client(clientId), 'tenantId');
  if (tenantId === null) return null;
  const keyIds = (await redis.smembers(keys.clientKeys(clientId))).sort(compareIds);
  const removalKeys = [
    keys.client(clientId),
    keys.clientKeys(clientId),
    keys.tenantClients(tenantId),
    keys.generation,
    ...keyIds.map((id) => keys.apiKey(id)),
  ];
  const reply = await redis.removeClient(
    removalKeys.length,
    ...removalKeys,
    clientId,
    tenantId,
    keys.sessionChannel,
    ...keyIds,
  );
  if (reply === CLIENT_STALE) return undefined;
  return typeof reply === 'number' && reply > 0 ? keyIds : null;
}
