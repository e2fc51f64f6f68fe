/**
 * The Redis store's browser sessions (see `redis-context.ts`; layout in
 * `redis-keys.ts`, scripts in `redis-browser-session-scripts.ts`). A
 * session is one JSON string under its id's own tag, expiring at its
 * absolute end; its user's index lives in a slot of its own, so a sign-in
 * writes the record first and the index after, and each command names keys
 * of one slot (Cluster). A new session is answered once a replica has it
 * (`context.replicated`): a failover right after a sign-in does not lose it.
 */
import {
  newestFirst,
  sessionEnded,
  sessionFromJson,
  sessionIdTaken,
} from './browser-session-records.js';
import type { BrowserSessionRecord, BrowserSessionStore } from './browser-sessions.js';
import { attempt } from './redis-attempt.js';
import type { RedisStoreContext } from './redis-context.js';

const nowSeconds = (): number => Date.now() / 1000;

/** The browser session methods of the Redis store. */
export function redisBrowserSessions(context: RedisStoreContext): BrowserSessionStore {
  const { redis, keys } = context;
  const read = async (sessionId: string): Promise<BrowserSessionRecord | null> => {
    const json = await attempt(() => redis.get(keys.browserSession(sessionId)));
    if (json === null) return null;
    const session = sessionFromJson(json);
    return sessionEnded(session, nowSeconds()) ? null : session;
  };
  return {
    createBrowserSession: (session) => create(context, session),
    getBrowserSession: read,

    async listBrowserSessions(userId) {
      const index = keys.browserSessionsOf(userId);
      const ids = await attempt(() => redis.zrange(index, '0', '-1'));
      const sessions = await Promise.all(ids.map(read));
      const gone = ids.filter((_, i) => sessions[i] === null);
      // The index is advisory: a failed prune is done again at the next listing.
      if (gone.length > 0) await redis.zrem(index, ...gone).catch(() => undefined);
      return sessions.filter((s): s is BrowserSessionRecord => s !== null).sort(newestFirst);
    },

    async touchBrowserSession(sessionId, at) {
      await attempt(() => redis.touchBrowserSession(keys.browserSession(sessionId), at));
    },

    async removeBrowserSession(sessionId) {
      const key = keys.browserSession(sessionId);
      const json = await attempt(() => redis.get(key));
      if (json === null) return;
      const { userId } = sessionFromJson(json);
      await attempt(() => redis.del(key));
      await redis.zrem(keys.browserSessionsOf(userId), sessionId).catch(() => undefined);
    },
  };
}

async function create(context: RedisStoreContext, session: BrowserSessionRecord): Promise<void> {
  const { redis, keys } = context;
  const now = nowSeconds();
  // A session ended at its creation is not stored (the memory store's rule too).
  if (sessionEnded(session, now)) return;
  const key = keys.browserSession(session.sessionId);
  const index = keys.browserSessionsOf(session.userId);
  const json = JSON.stringify(session);
  const created = await attempt(() =>
    redis.set(key, json, 'EXAT', session.absoluteExpiresAt, 'NX'),
  );
  if (created === null) throw sessionIdTaken();
  try {
    await attempt(() =>
      redis.indexBrowserSession(
        index,
        session.sessionId,
        session.absoluteExpiresAt,
        Math.floor(now),
      ),
    );
  } catch (err) {
    // Not handed out: a session its user's index lacks (so no listing shows it) must not stay behind.
    await redis.del(key).catch(() => undefined);
    throw err;
  }
  await Promise.all([context.replicated(key), context.replicated(index)]);
}
