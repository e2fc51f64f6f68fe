/**
 * The in-memory store's browser sessions (see `memory-state.ts`,
 * `browser-sessions.ts`): the same rules as the Redis store's
 * (`redis-browser-sessions.ts`). A record vanishes at its absolute end
 * (checked when read); a user's index is pruned of gone sessions when listed.
 */
import {
  copySession,
  newestFirst,
  sessionEnded,
  sessionIdTaken,
} from './browser-session-records.js';
import type { BrowserSessionRecord, BrowserSessionStore } from './browser-sessions.js';
import { addToSet, ensureOpen, removeFromSet, type MemoryState } from './memory-state.js';

const nowSeconds = (): number => Date.now() / 1000;

/** The browser session methods of the memory store, over its `state`. */
export function memoryBrowserSessions(state: MemoryState): BrowserSessionStore {
  const { browserSessions: records, browserSessionsOfUser: index } = state;

  /** The stored session unless it is gone (dropped from the map once past its end). */
  function read(sessionId: string): BrowserSessionRecord | undefined {
    const session = records.get(sessionId);
    if (session === undefined || !sessionEnded(session, nowSeconds())) return session;
    records.delete(sessionId);
    return undefined;
  }

  return {
    async createBrowserSession(session) {
      ensureOpen(state);
      if (read(session.sessionId) !== undefined) throw sessionIdTaken();
      // A session ended at its creation is stored as Redis would: not at all.
      if (sessionEnded(session, nowSeconds())) return;
      records.set(session.sessionId, copySession(session));
      addToSet(index, session.userId, session.sessionId);
    },

    async getBrowserSession(sessionId) {
      ensureOpen(state);
      const session = read(sessionId);
      return session === undefined ? null : copySession(session);
    },

    async listBrowserSessions(userId) {
      ensureOpen(state);
      const live: BrowserSessionRecord[] = [];
      for (const sessionId of [...(index.get(userId) ?? [])]) {
        const session = read(sessionId);
        if (session === undefined) removeFromSet(index, userId, sessionId);
        else live.push(copySession(session));
      }
      return live.sort(newestFirst);
    },

    async touchBrowserSession(sessionId, at) {
      ensureOpen(state);
      const session = read(sessionId);
      if (session !== undefined && at > session.lastSeenAt) session.lastSeenAt = at;
    },

    async removeBrowserSession(sessionId) {
      ensureOpen(state);
      const session = records.get(sessionId);
      if (session === undefined) return;
      records.delete(sessionId);
      removeFromSet(index, session.userId, sessionId);
    },
  };
}
