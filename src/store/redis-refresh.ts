/**
 * The Redis store's refresh-token families (see `redis-context.ts`; layout in
 * `redis-keys.ts`, scripts in `redis-refresh-scripts.ts`). A rotation is one
 * script on the family's key; a family and its user's index live in slots of
 * their own, so a login writes the family first and the index after, and the
 * index is advisory (see `redis-keys.ts`). An index entry is
 * `familyId@tenantId`, so the cap counts a user's families per tenant. Every write that creates, rotates
 * or ends a family is answered once a replica has it (`context.replicated`):
 * a Sentinel or Cluster failover never brings back a used refresh token.
 */
import { attempt } from './redis-attempt.js';
import { unexpectedReply, type RedisStoreContext } from './redis-context.js';
import { REVOKE_REPLY } from './redis-refresh-scripts.js';
import {
  checkFamilyTimes,
  checkMaxPerTenant,
  checkRotationInput,
  familyIdTaken,
  familyToRotate,
  publicFamily,
  refreshRecordExpiry,
  storedFamily,
  type StoredRefreshFamily,
} from './refresh-records.js';
import {
  isLiveFamily,
  REFRESH_RECORD_MARGIN_SECONDS,
  REFRESH_USED_DIGESTS_KEPT,
  type RefreshFamily,
  type RefreshStore,
  type RotateRefreshInput,
  type RotateResult,
} from './refresh.js';

/** The refresh-family methods of the Redis store. */
export function redisRefreshFamilies(context: RedisStoreContext): RefreshStore {
  const { redis, keys } = context;
  return {
    createRefreshFamily: (family, maxPerUser) => createFamily(context, family, maxPerUser),
    rotateRefreshToken: (input) => rotate(context, input),
    getRefreshFamily: async (familyId) => {
      const raw = await attempt(() => redis.get(keys.refreshFamily(familyId)));
      return raw === null ? null : publicFamily(familyFromJson(raw));
    },
    getRefreshFamilyToRotate: async (familyId) => {
      const raw = await attempt(() => redis.get(keys.refreshFamily(familyId)));
      return raw === null ? null : familyToRotate(familyFromJson(raw));
    },
    revokeRefreshFamily: async (familyId) => {
      const [reply, family] = await revokeOne(context, familyId, '');
      if (family === undefined) return null;
      await forget(context, family.userId, entriesOf(family));
      if (reply === REVOKE_REPLY.revoked) await context.replicated(keys.refreshFamily(familyId));
      return family;
    },
    revokeRefreshFamiliesOf: (userId, tenantId) => revokeAllOf(context, userId, tenantId),
    listRefreshFamilies: (userId) => listLive(context, userId),
  };
}

/** A family's entry in its user's index: its id and tenant. */
const indexEntry = (familyId: string, tenantId: string): string => `${familyId}@${tenantId}`;

/** The family id of an index entry (an entry written before issue 42 is the id alone). */
function familyIdOf(entry: string): string {
  const at = entry.lastIndexOf('@');
  return at === -1 ? entry : entry.slice(0, at);
}

/** The tenant of an index entry; undefined for an entry written before issue 42. */
function tenantIdOf(entry: string): string | undefined {
  const at = entry.lastIndexOf('@');
  return at === -1 ? undefined : entry.slice(at + 1);
}

/** The entries a family may have in its user's index (with its tenant, or the id alone). */
const entriesOf = (family: RefreshFamily): string[] => [
  indexEntry(family.familyId, family.tenantId),
  family.familyId,
];

async function createFamily(
  context: RedisStoreContext,
  family: RefreshFamily,
  maxPerTenant: number,
): Promise<RefreshFamily[]> {
  checkMaxPerTenant(maxPerTenant);
  checkFamilyTimes(family);
  const { redis, keys } = context;
  const key = keys.refreshFamily(family.familyId);
  const index = keys.refreshFamiliesOf(family.userId);
  const json = JSON.stringify(storedFamily(family));
  const expiresAt = refreshRecordExpiry(family);
  const created = await attempt(() => redis.set(key, json, 'EXAT', expiresAt, 'NX'));
  if (created === null) throw familyIdTaken();
  let out: unknown;
  try {
    out = await attempt(() =>
      redis.indexRefreshFamily(
        index,
        indexEntry(family.familyId, family.tenantId),
        family.absoluteExpiresAt,
        family.createdAt,
        maxPerTenant,
        REFRESH_RECORD_MARGIN_SECONDS,
        `@${family.tenantId}`,
      ),
    );
  } catch (err) {
    // Not handed out: a family its user's index lacks must not stay behind.
    await redis.del(key).catch(() => undefined);
    throw err;
  }
  if (!Array.isArray(out)) throw unexpectedReply();
  const entries = out.map(String);
  const ended = await Promise.all(
    entries.map((entry) => revokeOne(context, familyIdOf(entry), family.tenantId)),
  );
  await forget(context, family.userId, entries);
  const evicted = ended.flatMap(([reply, f]) => (reply === REVOKE_REPLY.revoked && f ? [f] : []));
  await Promise.all(
    [key, index, ...evicted.map((f) => keys.refreshFamily(f.familyId))].map(context.replicated),
  );
  return evicted;
}

async function rotate(
  context: RedisStoreContext,
  input: RotateRefreshInput,
): Promise<RotateResult> {
  checkRotationInput(input);
  const { redis, keys } = context;
  const key = keys.refreshFamily(input.familyId);
  const reply = await attempt(() =>
    redis.rotateRefreshToken(
      key,
      input.presentedDigest,
      input.successorDigest,
      input.jti,
      input.accessExpiresAt,
      input.now,
      input.graceSeconds,
      input.idleTtlSeconds,
      REFRESH_RECORD_MARGIN_SECONDS,
      REFRESH_USED_DIGESTS_KEPT,
    ),
  );
  if (!Array.isArray(reply)) throw unexpectedReply();
  const [outcome, json] = reply as unknown[];
  if (outcome === 'invalid') return { outcome };
  if (outcome !== 'rotated' && outcome !== 'grace' && outcome !== 'reused') throw unexpectedReply();
  if (typeof json !== 'string') throw unexpectedReply();
  const family = publicFamily(familyFromJson(json));
  if (outcome === 'reused') await forget(context, family.userId, entriesOf(family));
  await context.replicated(key);
  return { outcome, family };
}

/**
 * Runs the revocation script on one family (of `tenantId` only, unless '').
 * @returns the script's reply, and the family when it has one to show.
 */
async function revokeOne(
  { redis, keys }: RedisStoreContext,
  familyId: string,
  tenantId: string,
): Promise<[string, RefreshFamily | undefined]> {
  const reply = await attempt(() =>
    redis.revokeRefreshFamily(keys.refreshFamily(familyId), tenantId),
  );
  if (!Array.isArray(reply) || typeof reply[0] !== 'string') throw unexpectedReply();
  const [kind, json] = reply as [string, unknown];
  if (kind === REVOKE_REPLY.none || kind === REVOKE_REPLY.otherTenant) return [kind, undefined];
  if (typeof json !== 'string') throw unexpectedReply();
  return [kind, publicFamily(familyFromJson(json))];
}

async function revokeAllOf(
  context: RedisStoreContext,
  userId: string,
  tenantId: string | undefined,
): Promise<RefreshFamily[]> {
  const { redis, keys } = context;
  const all = await attempt(() => redis.zrange(keys.refreshFamiliesOf(userId), '0', '-1'));
  // An entry of another tenant is left alone without reading its family.
  const entries = all.filter((entry) => {
    const of = tenantIdOf(entry);
    return tenantId === undefined || of === undefined || of === tenantId;
  });
  const replies = await Promise.all(
    entries.map((entry) => revokeOne(context, familyIdOf(entry), tenantId ?? '')),
  );
  const revoked: RefreshFamily[] = [];
  const gone: string[] = [];
  replies.forEach(([reply, family], i) => {
    if (reply !== REVOKE_REPLY.otherTenant) gone.push(entries[i]!);
    if (reply === REVOKE_REPLY.revoked && family !== undefined) revoked.push(family);
  });
  await forget(context, userId, gone);
  await Promise.all(revoked.map((f) => context.replicated(keys.refreshFamily(f.familyId))));
  return revoked;
}

/**
 * The user's live families, read one by one from the index's entries (a
 * family's key and its user's index live in slots of their own). Entries of
 * families gone are left for the next login's or revocation's tidy-up: a
 * read writes nothing.
 */
async function listLive(context: RedisStoreContext, userId: string): Promise<RefreshFamily[]> {
  const { redis, keys } = context;
  const entries = await attempt(() => redis.zrange(keys.refreshFamiliesOf(userId), '0', '-1'));
  const raws = await Promise.all(
    entries.map((entry) => attempt(() => redis.get(keys.refreshFamily(familyIdOf(entry))))),
  );
  const now = Date.now() / 1000;
  return raws.flatMap((raw) => {
    if (raw === null) return [];
    const family = publicFamily(familyFromJson(raw));
    return family.userId === userId && isLiveFamily(family, now) ? [family] : [];
  });
}

/**
 * Takes ended families out of their user's index. Best effort: the index is
 * advisory, and the families are ended whether or not this lands.
 */
async function forget(
  { redis, keys }: RedisStoreContext,
  userId: string,
  entries: string[],
): Promise<void> {
  if (entries.length === 0) return;
  await redis.zrem(keys.refreshFamiliesOf(userId), ...entries).catch(() => undefined);
}

/** A family as the scripts keep it (cjson writes an empty list as `{}`; a record may have none). */
function familyFromJson(json: string): StoredRefreshFamily {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw unexpectedReply();
  }
  const family = parsed as StoredRefreshFamily;
  if (
    typeof family !== 'object' ||
    family === null ||
    typeof family.familyId !== 'string' ||
    typeof family.currentDigest !== 'string' ||
    typeof family.accessTokens !== 'object' ||
    (family.successorKey !== undefined && typeof family.successorKey !== 'string')
  ) {
    throw unexpectedReply();
  }
  if (!Array.isArray(family.used)) family.used = [];
  return family;
}
