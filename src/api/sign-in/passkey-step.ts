/**
 * Step 1 with a passkey (issue 45; `step=passkey`): the browser's assertion
 * (`credential`, JSON) answering the challenge kept for this pre-session
 * cookie (`identity/passkey-sign-in.ts` holds every rule), then the tenant and
 * the session exactly as after a password (`tenantThenSession`). Audited as
 * a login (`login_succeeded` / `login_failed` with `method: "passkey"`) and
 * counted as a refused login when refused. A refusal spends a point of the
 * client IP's login budget, never an e-mail's (a credential id is not
 * secret): past it 429 before any verification, as for a password.
 */
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { z } from 'zod';
import { GatewayError, isGatewayError } from '../../errors.js';
import type { PasskeyDeps } from '../../identity/passkey-deps.js';
import type { LoginOutcome } from '../../auth/passwords/brute-force.js';
import { signInWithPasskey, type PasskeySignIn } from '../../identity/passkey-sign-in.js';
import type { PasskeyRecord } from '../../store/types.js';
import { actor, namePrincipal } from '../identity/callers.js';
import { requiredParam } from '../identity/oauth-form.js';
import { tenantThenSession, type SignInPost } from './sign-in-steps.js';

const field = z.string().max(16384);

/** The fields of a `PublicKeyCredential`'s JSON the verification reads; the rest it checks. */
const Assertion = z.looseObject({
  id: field,
  rawId: field,
  type: z.literal('public-key'),
  response: z.looseObject({
    clientDataJSON: field,
    authenticatorData: field,
    signature: field,
    userHandle: field.optional(),
  }),
  clientExtensionResults: z.record(z.string(), z.unknown()),
  authenticatorAttachment: z.string().optional(),
});

export async function passkeyStep(post: SignInPost, passkeys: PasskeyDeps): Promise<void> {
  const { deps, ctx } = post;
  const response = assertionOf(requiredParam(post.form, 'credential'));
  const { user, passkey } = await provePasskey(post, passkeys, response);
  namePrincipal(ctx, 'user', user.id);
  await deps.audit.record('login_succeeded', actor(deps, ctx, user.email), {
    user_id: user.id,
    user_email: user.email,
    method: 'passkey',
    passkey_id: passkey.passkeyId,
  });
  return tenantThenSession(post, user);
}

/**
 * The assertion verified under the client IP's login budget (`limits.login`
 * `perIp`, the one wrong passwords spend): a point taken before any
 * verification, kept by a refusal, given back by a success. Refusals are
 * audited and counted as a password's are.
 * @throws GatewayError `too_many_requests`, `invalid_credentials`, `unavailable`
 */
async function provePasskey(
  post: SignInPost,
  passkeys: PasskeyDeps,
  response: AuthenticationResponseJSON,
): Promise<PasskeySignIn> {
  const { deps, ctx } = post;
  let found: PasskeyRecord | undefined;
  try {
    const attempt = await deps.bruteForce.beginPasskeyLogin(deps.clientIp(ctx.req));
    let outcome: LoginOutcome = 'abandoned';
    try {
      const proven = await signInWithPasskey(passkeys, post.preSession, response, (p) => {
        found = p;
      });
      outcome = 'succeeded';
      return proven;
    } catch (err) {
      if (isGatewayError(err) && err.code === 'invalid_credentials') outcome = 'failed';
      throw err;
    } finally {
      await attempt.end(outcome);
    }
  } catch (err) {
    await recordRefusal(post, err, found);
    throw err;
  }
}

/** A refused passkey's audit event and counter: `login_failed`, or `login_locked_out` past the budget. */
async function recordRefusal(
  { deps, ctx }: SignInPost,
  err: unknown,
  found: PasskeyRecord | undefined,
): Promise<void> {
  if (!isGatewayError(err)) return;
  if (err.code !== 'invalid_credentials' && err.code !== 'too_many_requests') return;
  deps.onLoginRefused?.(err.code);
  const kind = err.code === 'invalid_credentials' ? 'login_failed' : 'login_locked_out';
  // Who tried is known only when the credential is: its user, never what the browser claimed.
  const who = found === undefined ? {} : { user_id: found.userId, passkey_id: found.passkeyId };
  await deps.audit.record(kind, actor(deps, ctx, found?.userId ?? 'passkey'), {
    method: 'passkey',
    ...who,
  });
}

/** The `credential` field as an assertion's JSON. @throws GatewayError `invalid_request` */
function assertionOf(credential: string): AuthenticationResponseJSON {
  let parsed: unknown;
  try {
    parsed = JSON.parse(credential);
  } catch {
    throw new GatewayError('invalid_request', 'The passkey answer is not JSON.');
  }
  const result = Assertion.safeParse(parsed);
  if (!result.success)
    throw new GatewayError('invalid_request', 'The passkey answer is not a WebAuthn assertion.');
  // The shape is checked; what its fields say, the verification checks.
  return result.data as unknown as AuthenticationResponseJSON;
}
