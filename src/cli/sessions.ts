/**
 * `session list EMAIL` and `session end SESSION_ID`: a user's sessions —
 * browser sessions and refresh-token logins — by the identity operations
 * (`identity/sessions.ts`), the operator as actor, printed as the API's own
 * answer for the same records (`GET /1/sessions`). A session is named by its
 * public id; a list shows no secret. `session end` ends either kind on every
 * running instance before it returns (a family with every access token of it).
 */
import { createRefreshTokens } from '../auth/refresh/refresh-grant.js';
import { sessionList } from '../api/session-representations.js';
import type { LoadedConfig } from '../config/index.js';
import type { Core } from '../core/create-core.js';
import { endSession, listSessions, type SessionDeps } from '../identity/sessions.js';
import type { UserRecord } from '../store/types.js';
import { operator, print, withCore } from './store-command.js';
import { notFoundAs, UsageError } from './usage-error.js';

/** The sessions operations' parts, from the command's core. */
export function sessionDeps(loaded: LoadedConfig, core: Core): SessionDeps {
  return {
    store: core.store,
    refreshTokens: createRefreshTokens({ ...core, tokens: loaded.config.tokens }),
    // Whatever `sessions.enabled` says here: the gateways on the store may have them on.
    browserSessions: core.browserSessions,
    audit: core.audit,
  };
}

/** The user of `email`, or a usage error saying there is none. */
export async function userOf(core: Core, email: string): Promise<UserRecord> {
  const user = await core.store.users.findUserByEmail(email);
  if (user === null) throw new UsageError(`no user ${email}`);
  return user;
}

/** `session list EMAIL`: the user's live sessions of both kinds, newest first. */
export async function sessionListCommand(loaded: LoadedConfig, email: string): Promise<void> {
  await withCore(loaded, async (core) => {
    const user = await userOf(core, email);
    const sessions = await listSessions(sessionDeps(loaded, core), user.id);
    print({ user_id: user.id, user_email: user.email, ...sessionList(sessions) });
  });
}

/** `session end SESSION_ID`: any user's session, either kind, ended everywhere before it returns. */
export async function sessionEndCommand(loaded: LoadedConfig, sessionId: string): Promise<void> {
  await withCore(loaded, async (core) => {
    await endSession(sessionDeps(loaded, core), operator(), sessionId).catch(
      notFoundAs(`no live session ${sessionId}`),
    );
    print({ session_id: sessionId, ended: true });
  });
}
