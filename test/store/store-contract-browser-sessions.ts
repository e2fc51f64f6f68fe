/**
 * The store contract for the browser sessions slice (`Store.browserSessions`,
 * issue 44): the records behind session cookies. Registered by
 * `describeStoreContract`, so memory and every Redis topology run it.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/types.js';
import { newBrowserSession, realNow, rejectionOf, sleep } from './store-fixtures.js';

/** Sessions: kept whole, listed per user newest first, touched forward only, removed, gone at their end. */
export function describeBrowserSessionContract(current: () => Store): void {
  describe('browser sessions', () => {
    it('keeps a session as given, and knows no other id', async () => {
      const store = current();
      const session = newBrowserSession({
        idp: { issuer: 'https://idp.example', subject: 'sub-1', sid: 'sid-1' },
      });
      await store.browserSessions.createBrowserSession(session);
      expect(await store.browserSessions.getBrowserSession(session.sessionId)).toEqual(session);
      expect(await store.browserSessions.getBrowserSession(`${session.sessionId}x`)).toBeNull();
      const plain = newBrowserSession();
      await store.browserSessions.createBrowserSession(plain);
      expect(await store.browserSessions.getBrowserSession(plain.sessionId)).toEqual(plain);
    });

    it('shares no object with its callers', async () => {
      const store = current();
      const session = newBrowserSession({ idp: { issuer: 'https://idp.example', subject: 's' } });
      const expected = structuredClone(session);
      await store.browserSessions.createBrowserSession(session);
      session.role = 'admin';
      (session.idp as { subject: string }).subject = 'changed';
      const read = await store.browserSessions.getBrowserSession(session.sessionId);
      expect(read).toEqual(expected);
      (read as { role: string }).role = 'admin';
      expect(await store.browserSessions.getBrowserSession(session.sessionId)).toEqual(expected);
    });

    it('refuses a session id already in use, leaving the first session as it was', async () => {
      const store = current();
      const first = newBrowserSession();
      await store.browserSessions.createBrowserSession(first);
      const second = newBrowserSession({ sessionId: first.sessionId, userId: 'u-other' });
      expect((await rejectionOf(store.browserSessions.createBrowserSession(second))).code).toBe(
        'internal_error',
      );
      expect(await store.browserSessions.getBrowserSession(first.sessionId)).toEqual(first);
      expect(await store.browserSessions.listBrowserSessions('u-other')).toEqual([]);
    });

    it("lists a user's sessions newest first, no one else's, none removed", async () => {
      const store = current();
      const now = realNow();
      const userId = `u-list-${now}-${Math.random()}`;
      const older = newBrowserSession({ userId, createdAt: now - 20, lastSeenAt: now - 20 });
      const newer = newBrowserSession({ userId, createdAt: now - 5, lastSeenAt: now - 5 });
      const removed = newBrowserSession({ userId, createdAt: now - 1 });
      const other = newBrowserSession();
      for (const s of [older, removed, newer, other])
        await store.browserSessions.createBrowserSession(s);
      await store.browserSessions.removeBrowserSession(removed.sessionId);
      expect(await store.browserSessions.listBrowserSessions(userId)).toEqual([newer, older]);
      expect(await store.browserSessions.listBrowserSessions(other.userId)).toEqual([other]);
      expect(await store.browserSessions.listBrowserSessions('u-nobody')).toEqual([]);
    });

    it('records a later use only, and nothing for a session that is gone', async () => {
      const store = current();
      const session = newBrowserSession();
      await store.browserSessions.createBrowserSession(session);
      await store.browserSessions.touchBrowserSession(session.sessionId, session.lastSeenAt + 60);
      await store.browserSessions.touchBrowserSession(session.sessionId, session.lastSeenAt + 30);
      const read = await store.browserSessions.getBrowserSession(session.sessionId);
      expect(read).toEqual({ ...session, lastSeenAt: session.lastSeenAt + 60 });
      await store.browserSessions.touchBrowserSession('ses_gone', realNow());
      expect(await store.browserSessions.getBrowserSession('ses_gone')).toBeNull();
      await store.browserSessions.removeBrowserSession(session.sessionId);
      await store.browserSessions.touchBrowserSession(session.sessionId, realNow() + 120);
      expect(await store.browserSessions.getBrowserSession(session.sessionId)).toBeNull();
    });

    it('removes a session idempotently, from its record and from its user list', async () => {
      const store = current();
      const session = newBrowserSession();
      await store.browserSessions.createBrowserSession(session);
      await store.browserSessions.removeBrowserSession(session.sessionId);
      await store.browserSessions.removeBrowserSession(session.sessionId);
      await store.browserSessions.removeBrowserSession('ses_never');
      expect(await store.browserSessions.getBrowserSession(session.sessionId)).toBeNull();
      expect(await store.browserSessions.listBrowserSessions(session.userId)).toEqual([]);
    });

    it('forgets a session at its absolute end, touched or not', async () => {
      const store = current();
      const now = realNow();
      const short = newBrowserSession({ absoluteExpiresAt: now + 1 });
      const long = newBrowserSession({ userId: short.userId, absoluteExpiresAt: now + 3600 });
      await store.browserSessions.createBrowserSession(short);
      await store.browserSessions.createBrowserSession(long);
      await store.browserSessions.touchBrowserSession(short.sessionId, now + 1);
      await sleep(2100);
      await store.browserSessions.touchBrowserSession(short.sessionId, now + 2);
      expect(await store.browserSessions.getBrowserSession(short.sessionId)).toBeNull();
      expect(await store.browserSessions.listBrowserSessions(short.userId)).toEqual([long]);
      const ended = newBrowserSession({ absoluteExpiresAt: now - 1 });
      await store.browserSessions.createBrowserSession(ended);
      expect(await store.browserSessions.getBrowserSession(ended.sessionId)).toBeNull();
    });
  });
}
