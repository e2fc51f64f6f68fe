/**
 * The browser sessions slice of the store (`Store.browserSessions`, issue 44):
 * the server-side records behind session cookies. Implemented by
 * `memory-browser-sessions.ts` and `redis-browser-sessions.ts`, held to one
 * behaviour by `test/store/store-contract-browser-sessions.ts`.
 *
 * A record only says what a session was begun as. Whether it is still alive
 * is the session guard's verdict, as for a token (`auth/revocation/sessions.ts`):
 * its id deny-listed (sign-out, `revocations.revokeToken`), the user's session
 * version moved on (password change, disable, removal), the membership's
 * generation moved on (member removed, role changed, tenant removed). The
 * record vanishes by itself at its absolute end.
 */

/** A browser session as stored; the cookie's secret is kept only as a digest. */
export interface BrowserSessionRecord {
  /** `ses_…`: public (listed to its user, named by `DELETE /1/sessions/{id}`, the deny-list's key). */
  sessionId: string;
  /** SHA-256 of the cookie's secret part, hex. */
  digest: string;
  userId: string;
  email: string;
  tenantId: string;
  /** The member's role at sign-in: a role change ends the session (the generation moves on). */
  role: string;
  /** The user's session version at sign-in (a token's `sv`). */
  sessionVersion: number;
  /** The membership's generation at sign-in (a token's `mg`). */
  membershipGeneration: number;
  /** Unix seconds. */
  createdAt: number;
  /** Unix seconds of the last use seen (written in the background, so approximate). */
  lastSeenAt: number;
  /** Unix seconds: the session ends then, used or not. */
  absoluteExpiresAt: number;
  /** As sent at sign-in, at most 256 characters. */
  userAgent: string;
  /** The client IP at sign-in. */
  ip: string;
  /** A session begun at a tenant's IdP: its issuer, the user's `sub` there and the IdP's `sid` when it sent one. */
  idp?: { issuer: string; subject: string; sid?: string };
}

export interface BrowserSessionStore {
  /**
   * Stores a new session and adds it to its user's index. Resolves once a
   * replica has it (Sentinel, Cluster).
   */
  createBrowserSession(session: BrowserSessionRecord): Promise<void>;
  /** The session as stored; null once it is removed or past its absolute end. */
  getBrowserSession(sessionId: string): Promise<BrowserSessionRecord | null>;
  /** The user's sessions not removed nor past their absolute end, newest first. */
  listBrowserSessions(userId: string): Promise<BrowserSessionRecord[]>;
  /**
   * Records a use at `at` (Unix seconds), unless a later one is recorded;
   * nothing for a session that is gone. Meant for the background: no session
   * event, no replica wait.
   */
  touchBrowserSession(sessionId: string, at: number): Promise<void>;
  /**
   * Removes the record and takes it out of its user's index (idempotent).
   * Not what ends a session: deny-list its id (`revocations.revokeToken`) first.
   */
  removeBrowserSession(sessionId: string): Promise<void>;
}
