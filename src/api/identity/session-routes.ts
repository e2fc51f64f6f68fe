/**
 * A user's own sessions (issue 44): `GET /1/sessions` lists them (browser
 * sessions and refresh-token logins, the caller's own marked `current`),
 * `DELETE /1/sessions/{session_id}` ends one on every instance before the
 * 204. The caller comes by bearer token or session cookie
 * (`callers.ts`, `sessionOrBearer`: with the cookie, a DELETE must be
 * same-origin). The operations, their rules and audit events are
 * `identity/sessions.ts`, which the CLI calls too; this file parses and renders.
 */
import type { Router } from '@koa/router';
import { GatewayError } from '../../errors.js';
import { endSession, listSessions, type SessionDeps } from '../../identity/sessions.js';
import { sessionList } from '../session-representations.js';
import type { ApiContext, ApiState } from '../state.js';
import { actor, noStore, sessionOrBearer, type SessionOrBearerCaller } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';

export function addSessionRoutes(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  const sessionDeps: SessionDeps = {
    store: deps.store,
    // Without refresh tokens (an app built without them) no family can be ended here.
    refreshTokens: deps.refreshTokens ?? { endFamily: async () => null },
    browserSessions: deps.browserSessions,
    audit: deps.audit,
  };
  router.get('/sessions', async (ctx) => {
    const caller = await userCaller(deps, ctx);
    const sessions = await listSessions(sessionDeps, caller.userId, currentSession(caller));
    noStore(ctx);
    ctx.body = sessionList(sessions);
  });
  router.delete('/sessions/:session_id', async (ctx) => {
    const caller = await userCaller(deps, ctx);
    const self = { kind: 'self' as const, audit: actor(deps, ctx, caller.email) };
    await endSession(sessionDeps, self, ctx.params.session_id as string, caller.userId);
    ctx.status = 204;
  });
}

/** The calling user; a machine client's token has no sessions (403 `forbidden`). */
async function userCaller(
  deps: IdentityRouterDeps,
  ctx: ApiContext,
): Promise<SessionOrBearerCaller> {
  const caller = await sessionOrBearer(deps, ctx);
  if (caller.kind === 'client')
    throw new GatewayError('forbidden', 'A machine client has no sessions.');
  return caller;
}

/** The session the request came with: its cookie's, or its token's refresh family. */
function currentSession(caller: SessionOrBearerCaller): string | undefined {
  return caller.kind === 'session' ? caller.sessionId : caller.claims.fid;
}
