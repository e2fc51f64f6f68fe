/**
 * A user's passkeys (issue 45; `mfa.passkeys.enabled`), in a browser session
 * only (`callers.ts`, `sessionOnly`: the cookie, and an unsafe method from
 * the gateway's own origin):
 *
 * - `POST /1/users/current/passkeys/options`: the WebAuthn creation options;
 * - `POST /1/users/current/passkeys`: the browser's answer → 201 the passkey;
 * - `GET /1/users/current/passkeys`: the caller's passkeys;
 * - `DELETE /1/users/current/passkeys/{passkey_id}`: 204.
 *
 * The operations, their rules and audit events are `identity/passkeys.ts`;
 * this file parses and renders.
 */
import type { Router } from '@koa/router';
import type { SessionPrincipal } from '../../auth/sessions/browser-sessions.js';
import { GatewayError } from '../../errors.js';
import {
  listPasskeys,
  registerPasskey,
  registrationOptions,
  removePasskey,
  type PasskeyView,
} from '../../identity/passkeys.js';
import { readJsonBody } from '../request-input.js';
import { PasskeyRegistration } from '../schemas/passkeys.js';
import type { ApiContext, ApiState } from '../state.js';
import { actor, noStore, sessionOnly } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';

const PASSKEYS = '/users/:user_id/passkeys';

export function addPasskeyRoutes(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  const passkeys = deps.passkeys;
  if (passkeys === undefined) return;
  router.post(`${PASSKEYS}/options`, async (ctx) => {
    const caller = await pathCaller(deps, ctx);
    const user = await deps.store.users.getUser(caller.userId);
    if (user === null) throw new GatewayError('invalid_token', 'The user no longer exists.');
    noStore(ctx);
    ctx.body = await registrationOptions(passkeys, user, caller.sessionId);
  });
  router.get(PASSKEYS, async (ctx) => {
    const caller = await pathCaller(deps, ctx);
    noStore(ctx);
    ctx.body = {
      passkeys: (await listPasskeys(passkeys, caller.userId)).map((view) => ({
        ...passkeyOf(view),
        last_used_at: view.lastUsedAt,
      })),
    };
  });
  router.post(PASSKEYS, async (ctx) => {
    const caller = await pathCaller(deps, ctx);
    const body = await readJsonBody(ctx, PasskeyRegistration, deps.bodyLimit);
    const self = { kind: 'self' as const, audit: actor(deps, ctx, caller.email) };
    const user = { id: caller.userId, email: caller.email };
    const view = await registerPasskey(passkeys, self, user, caller.sessionId, {
      // The library reads the fields the schema checked; it verifies the rest.
      response: body.response as unknown as Parameters<typeof registerPasskey>[4]['response'],
      name: body.name,
    });
    noStore(ctx);
    ctx.status = 201;
    ctx.body = passkeyOf(view);
  });
  router.delete(`${PASSKEYS}/:passkey_id`, async (ctx) => {
    const caller = await pathCaller(deps, ctx);
    const self = { kind: 'self' as const, audit: actor(deps, ctx, caller.email) };
    const user = { id: caller.userId, email: caller.email };
    await removePasskey(passkeys, self, user, ctx.params.passkey_id as string);
    ctx.status = 204;
  });
}

/** The session's user, when the path names them (`current` or their id). */
async function pathCaller(deps: IdentityRouterDeps, ctx: ApiContext): Promise<SessionPrincipal> {
  const caller = await sessionOnly(deps, ctx);
  const named = ctx.params.user_id;
  if (named !== 'current' && named !== caller.userId)
    throw new GatewayError('forbidden', 'The path names another user.');
  return caller;
}

function passkeyOf(view: PasskeyView) {
  return { passkey_id: view.passkeyId, name: view.name, created_at: view.createdAt };
}
