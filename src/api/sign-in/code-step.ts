/**
 * The code step of the sign-in page (issue 45), between the password and
 * the tenant: a user with a second factor (`mfa.totp.enabled`) gets the code
 * page after the password, the proven password kept only as the pending
 * record (`pending.ts`, marked `codeNeeded`: the tenant step refuses it).
 * The code is checked by the one second-factor check the Basic login uses
 * (once per code, bounded per user, audited); a wrong one shows the step
 * again with a sentence (401, or 429 past `limits.secondFactor`), the record
 * put back (under a new pre-session cookie, as every step that keeps it:
 * `keepPending`); a right one goes on to the tenant and the session.
 */
import { GatewayError, isGatewayError } from '../../errors.js';
import { actor, namePrincipal } from '../identity/callers.js';
import { param } from '../identity/oauth-form.js';
import { codePage } from './code-page.js';
import { messageFor } from './messages.js';
import { answerPage } from './page-headers.js';
import { takePending, type PendingSignIn } from './pending.js';
import { keepPending, tenantThenSession, type SignInPost } from './sign-in-steps.js';

/** The code step's post: the code, then the tenant and the session. */
export async function codeStep(post: SignInPost): Promise<void> {
  const { deps, ctx } = post;
  const pending = await takePending(deps.store.sso, post.preSession);
  if (pending?.codeNeeded !== true || deps.secondFactors === undefined)
    throw new GatewayError('invalid_request', 'This sign-in has expired. Please sign in again.', {
      detail: 'expired',
    });
  post.echo.returnTo = pending.returnTo;
  post.echo.email = pending.email;
  post.echo.tenantId = pending.tenantId;
  namePrincipal(ctx, 'user', pending.userId);
  const user = { id: pending.userId, email: pending.email };
  try {
    await deps.secondFactors.prove(user, param(post.form, 'code'), actor(deps, ctx, user.email));
  } catch (err) {
    if (!isGatewayError(err) || (err.code !== 'mfa_required' && err.code !== 'too_many_requests'))
      throw err;
    await codeAgain(post, pending, err);
    return;
  }
  await tenantThenSession(post, user);
}

/** The step again, its record put back, with the refusal in words (401 or 429). */
async function codeAgain(
  post: SignInPost,
  pending: PendingSignIn,
  refusal: GatewayError,
): Promise<void> {
  const formToken = await keepPending(post, pending);
  post.signIn.onSignIn?.(refusal.code === 'mfa_required' ? 'wrong_code' : 'throttled');
  const retryAfter = refusal.headers['retry-after'];
  if (retryAfter !== undefined) post.ctx.set('retry-after', retryAfter);
  answerPage(post.ctx, refusal.status, codePage({ formToken, error: messageFor(refusal) }));
}
