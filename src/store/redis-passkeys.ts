/**
 * The Redis store's passkeys (see `passkeys.ts`; layout in `redis-keys.ts`,
 * scripts in `redis-passkey-scripts.ts`). A write is answered once a replica has it.
 */
import { byAge } from './memory-passkeys.js';
import {
  MAX_USER_PASSKEYS,
  type PasskeyAdded,
  type PasskeyRecord,
  type PasskeyStore,
  type PasskeyUse,
} from './passkeys.js';
import { attempt } from './redis-attempt.js';
import { unexpectedReply, type RedisStoreContext } from './redis-context.js';

/** The fixed fields as stored in `record` (the counter and last use are fields of their own). */
type StoredPasskey = Omit<PasskeyRecord, 'credentialId' | 'counter' | 'lastUsedAt'>;

function stored(record: PasskeyRecord): string {
  const { passkeyId, userId, publicKey, transports, name, createdAt } = record;
  const fixed: StoredPasskey = { passkeyId, userId, publicKey, transports, name, createdAt };
  return JSON.stringify(fixed);
}

function recordOf(credentialId: string, hash: Record<string, string>): PasskeyRecord | null {
  if (hash['record'] === undefined) return null;
  const fixed = JSON.parse(hash['record']) as StoredPasskey;
  const lastUsedAt = hash['lastUsedAt'];
  return {
    ...fixed,
    credentialId,
    counter: Number(hash['counter'] ?? 0),
    ...(lastUsedAt === undefined ? {} : { lastUsedAt: Number(lastUsedAt) }),
  };
}

const ADDED = new Set<string>(['added', 'credential_taken', 'too_many', 'no_user']);
const USES = new Set<string>(['used', 'counter_regressed', 'missing']);

export function redisPasskeys(context: RedisStoreContext): PasskeyStore {
  const { redis, keys } = context;
  const get = async (credentialId: string) =>
    recordOf(credentialId, await attempt(() => redis.hgetall(keys.passkey(credentialId))));
  const list = async (userId: string) => {
    const ids = await attempt(() => redis.smembers(keys.passkeysOf(userId)));
    const records = await Promise.all(ids.map(get));
    return records.filter((r): r is PasskeyRecord => r !== null).sort(byAge);
  };
  return {
    addPasskey: async (record) => {
      const reply = await attempt(() =>
        redis.addPasskey(
          keys.user(record.userId),
          keys.passkey(record.credentialId),
          keys.passkeysOf(record.userId),
          record.credentialId,
          stored(record),
          record.counter,
          MAX_USER_PASSKEYS,
        ),
      );
      if (typeof reply !== 'string' || !ADDED.has(reply)) throw unexpectedReply();
      if (reply === 'added') await context.replicated(keys.passkey(record.credentialId));
      return reply as PasskeyAdded;
    },
    listPasskeys: list,
    getPasskey: get,
    usePasskey: async (credentialId, counter, at) => {
      const reply = await attempt(() => redis.usePasskey(keys.passkey(credentialId), counter, at));
      if (typeof reply !== 'string' || !USES.has(reply)) throw unexpectedReply();
      if (reply === 'used') await context.replicated(keys.passkey(credentialId));
      return reply as PasskeyUse;
    },
    removePasskey: async (userId, passkeyId) => {
      const record = (await list(userId)).find((r) => r.passkeyId === passkeyId);
      if (record === undefined) return null;
      const reply = await attempt(() =>
        redis.removePasskey(
          keys.passkeysOf(userId),
          keys.passkey(record.credentialId),
          record.credentialId,
        ),
      );
      if (reply !== 1) return null;
      await context.replicated(keys.passkeysOf(userId));
      return record;
    },
  };
}
