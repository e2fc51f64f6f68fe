/**
 * A user's own TOTP second factor (issue 45; `mfa.totp.enabled`, else the
 * paths are 404): `POST /1/users/{user_id}/mfa/totp` (a pending enrolment),
 * `POST …/mfa/totp/confirm` (the recovery codes, once), `DELETE …/mfa/totp`.
 * The caller comes with Basic (the password, and `X-OTP` once enrolled:
 * `logIn` proves it), a bearer token or the session cookie (`X-OTP` then
 * checked by the operation where a confirmed factor must be proven). The
 * operations and their rules are `identity/totp.ts`; this parses and renders.
 */
import type { Router } from '@koa/router';
import { namesBearer } from '../../auth/credentials/read-credential.js';
import { GatewayError } from '../../errors.js';
import {
  beginTotpEnrolment,
  confirmTotpEnrolment,
  removeTotp,
  type FactorProof,
  type TotpDeps,
} from '../../identity/totp.js';
import type { UserRecord } from '../../store/types.js';
import { readJsonBody } from '../request-input.js';
import { TotpConfirmation } from '../schemas/totp.js';
import type { ApiContext, ApiState } from '../state.js';
import { actor, noStore, pathUser, sessionOrBearer } from './callers.js';
import type { IdentityRouterDeps } from './deps.js';
import { X_OTP } from './second-factor-header.js';

export function addTotpRoutes(router: Router<ApiState>, deps: IdentityRouterDeps): void {
  const factors = deps.secondFactors;
  if (factors === undefined) return;
  const totp: TotpDeps = { store: deps.store, factors, audit: deps.audit };
  router.post('/users/:user_id/mfa/totp', async (ctx) => {
    const { user, proof, self } = await factorCaller(deps, ctx);
    const enrolment = await beginTotpEnrolment(totp, self, user, proof);
    noStore(ctx);
    ctx.status = 201;
    ctx.body = { secret: enrolment.secret, otpauth_uri: enrolment.otpauthUri };
  });
  router.post('/users/:user_id/mfa/totp/confirm', async (ctx) => {
    const { user, self } = await factorCaller(deps, ctx);
    const body = await readJsonBody(ctx, TotpConfirmation, deps.bodyLimit);
    const codes = await confirmTotpEnrolment(totp, self, user, body.code);
    noStore(ctx);
    ctx.body = { recovery_codes: codes };
  });
  router.delete('/users/:user_id/mfa/totp', async (ctx) => {
    const { user, proof, self } = await factorCaller(deps, ctx);
    await removeTotp(totp, self, user, proof);
    ctx.status = 204;
  });
}

/**
 * The user the path names, by Basic (which proved `X-OTP` on the way in
 * when they are enrolled) or by bearer token or session cookie (`X-OTP`
 * left for the operation to check).
 * @throws `invalid_credentials`, `invalid_token`, `mfa_required` (401);
 * `forbidden`, `csrf_refused` (403); `too_many_requests`
 */
async function factorCaller(
  deps: IdentityRouterDeps,
  ctx: ApiContext,
): Promise<{
  user: UserRecord;
  proof: FactorProof;
  self: { kind: 'self'; audit: ReturnType<typeof actor> };
}> {
  const inPath = ctx.params.user_id as string;
  const authorization = ctx.get('authorization');
  if (authorization !== '' && !namesBearer(authorization)) {
    const user = await pathUser(deps, ctx, inPath);
    return {
      user,
      proof: { proven: true },
      self: { kind: 'self', audit: actor(deps, ctx, user.email) },
    };
  }
  const caller = await sessionOrBearer(deps, ctx);
  if (caller.kind === 'client')
    throw new GatewayError('forbidden', 'A machine client has no second factor.');
  if (inPath !== 'current' && inPath !== caller.userId)
    throw new GatewayError('forbidden', 'The path names another user.');
  const user = await deps.store.users.getUser(caller.userId);
  if (user === null) throw new GatewayError('invalid_token', 'The user no longer exists.');
  const presented = ctx.get(X_OTP) || undefined;
  return {
    user,
    proof: { proven: false, presented },
    self: { kind: 'self', audit: actor(deps, ctx, user.email) },
  };
}
