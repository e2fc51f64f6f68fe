/**
 * Step 1 with a passkey (issue 45; `step=passkey`): the browser's assertion
 * (`credential`, JSON) answering the challenge kept for this pre-session
 * cookie (`identity/passkey-sign-in.ts` holds every rule), then the tenant and
 * the session exactly as after a password (`tenantThenSession`). Audited as
 * a login (`login_succeeded` / `login_failed` with `method: "passkey"`) and
 * counted as a refused login when refused.
 */
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { z } from 'zod';
import { GatewayError, isGatewayError } from '../../errors.js';
import type { PasskeyDeps } from '../../identity/passkey-deps.js';
import { signInWithPasskey } from '../../identity/passkey-sign-in.js';
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
  let found: PasskeyRecord | undefined;
  try {
    const { user, passkey } = await signInWithPasskey(passkeys, post.preSession, response, (p) => {
      found = p;
    });
    namePrincipal(ctx, 'user', user.id);
    await deps.audit.record('login_succeeded', actor(deps, ctx, user.email), {
      user_id: user.id,
      user_email: user.email,
      method: 'passkey',
      passkey_id: passkey.passkeyId,
    });
    return await tenantThenSession(post, user);
  } catch (err) {
    if (isGatewayError(err) && err.code === 'invalid_credentials') {
      deps.onLoginRefused?.('invalid_credentials');
      // Who tried is known only when the credential is: its user, never what the browser claimed.
      const who = found === undefined ? {} : { user_id: found.userId, passkey_id: found.passkeyId };
      await deps.audit.record('login_failed', actor(deps, ctx, found?.userId ?? 'passkey'), {
        method: 'passkey',
        ...who,
      });
    }
    throw err;
  }
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
