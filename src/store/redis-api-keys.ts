/**
 * The Redis store's API keys (see `redis-context.ts`; layout in
 * `redis-keys.ts`). Creating and removing one takes the next generation;
 * recording its use is a background write (no replica wait).
 */
import { GatewayError } from '../errors.js';
import { compareIds } from './normalise.js';
import { attempt } from './redis-attempt.js';
import { CLIENT_ID_TAKEN } from './redis-client-scripts.js';
import { unexpectedReply, type RedisStoreContext } from './redis-context.js';
import { apiKeyFromHash, apiKeyHashArguments } from './redis-records.js';
import type { ApiKeyStore } from './api-keys.js';
import type { ApiKeyRecord, NewApiKey } from './types.js';

export function redisApiKeys(context: RedisStoreContext): ApiKeyStore {
  const { redis, keys } = context;
  return {
    createApiKey: (key) => createApiKey(context, key),
    getApiKey: async (keyId) =>
      apiKeyFromHash(await attempt(() => redis.hgetall(keys.apiKey(keyId)))),
    listApiKeys: async (clientId) => {
      const ids = await attempt(() => redis.smembers(keys.clientKeys(clientId)));
      const hashes = await attempt(() =>
        Promise.all(ids.map((id) => redis.hgetall(keys.apiKey(id)))),
      );
      return hashes
        .flatMap((hash) => apiKeyFromHash(hash) ?? [])
        .sort((a, b) => compareIds(a.keyId, b.keyId));
    },
    removeApiKey: async (clientId, keyId) => {
      const reply = await attempt(() =>
        redis.removeApiKey(
          keys.clientKeys(clientId),
          keys.apiKey(keyId),
          keys.generation,
          keyId,
          keys.sessionChannel,
          clientId,
        ),
      );
      if (Number(reply) === 0) return false;
      context.tellWatchers({ kind: 'client-changed', clientId });
      await context.replicated(keys.apiKey(keyId));
      return true;
    },
    touchApiKey: async (keyId, at) => {
      await attempt(() => redis.touchApiKey(keys.apiKey(keyId), at));
    },
  };
}

async function createApiKey(
  context: RedisStoreContext,
  input: NewApiKey,
): Promise<ApiKeyRecord | null> {
  const { redis, keys } = context;
  const reply = await attempt(() =>
    redis.createApiKey(
      keys.client(input.clientId),
      keys.apiKey(input.keyId),
      keys.clientKeys(input.clientId),
      keys.generation,
      input.keyId,
      ...apiKeyHashArguments(input),
    ),
  );
  if (!Array.isArray(reply)) throw unexpectedReply();
  const [generation, tenantId] = reply as unknown[];
  if (generation === 0) return null;
  if (generation === CLIENT_ID_TAKEN) {
    throw new GatewayError('internal_error', 'The key id is already in use.');
  }
  if (typeof generation !== 'number' || typeof tenantId !== 'string') throw unexpectedReply();
  await context.replicated(keys.apiKey(input.keyId));
  const key: ApiKeyRecord = { ...input, tenantId, generation };
  if (key.expiresAt === undefined) delete key.expiresAt;
  return key;
}
