/**
 * Signing in with a passkey (issue 45), as both factors: the authenticator
 * proved possession of the key and verified the person (user verification
 * required), so no password and no second factor are asked. Usernameless:
 * the options name no credential, the browser offers the passkeys it holds
 * for the rpId, and the answer's user handle names the user.
 *
 * An assertion is accepted only when every one of these holds, else it is
 * refused as one (401 `invalid_credentials`, never saying which):
 * - the challenge it signs is the one kept for this browser's pre-session
 *   cookie, taken now (single use: a replay finds none; another page's
 *   challenge is not this one's);
 * - its credential is stored (not removed), and its user handle names the
 *   passkey's own user (a passkey of another user cannot speak for this one);
 * - the signature verifies with the stored key, over `publicUrl`'s origin
 *   and the rpId's hash, user verification flagged;
 * - its signature counter moves forwards (`PasskeyStore.usePasskey`);
 * - the user exists and is not disabled.
 */
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/server';
import { isDisabledHash } from '../auth/revocation/disabled.js';
import { GatewayError } from '../errors.js';
import type { PasskeyRecord, UserRecord } from '../store/types.js';
import { CHALLENGE_SECONDS, keepChallenge, takeChallenge } from './passkey-challenges.js';
import { nowOf, type PasskeyDeps } from './passkey-deps.js';

/** The request options for `navigator.credentials.get`, the challenge kept for `preSession`. */
export async function signInOptions(
  deps: PasskeyDeps,
  preSession: string,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const options = await deps.webauthn.generateAuthenticationOptions({
    rpID: deps.relyingParty.id,
    timeout: CHALLENGE_SECONDS * 1000,
    userVerification: 'required',
  });
  await keepChallenge(deps.store.sso, 'passkey-sign-in', preSession, options.challenge);
  return options;
}

/** Who signed in, and with which passkey. */
export interface PasskeySignIn {
  user: UserRecord;
  passkey: PasskeyRecord;
}

/**
 * The user the assertion proves (see the file's rules); the passkey's counter
 * and last use written.
 * @param known told of the passkey's user as soon as the credential is found (for a refusal's audit)
 * @throws GatewayError `invalid_credentials` (detail `passkey`), `unavailable`
 */
export async function signInWithPasskey(
  deps: PasskeyDeps,
  preSession: string,
  response: AuthenticationResponseJSON,
  known?: (passkey: PasskeyRecord) => void,
): Promise<PasskeySignIn> {
  const challenge = await takeChallenge(deps.store.sso, 'passkey-sign-in', preSession);
  if (challenge === undefined) throw refused('no live challenge for this browser');
  const passkey = await deps.store.passkeys.getPasskey(response.id);
  if (passkey === null) throw refused('unknown credential');
  known?.(passkey);
  const handle = response.response.userHandle;
  if (handle === undefined || Buffer.from(handle, 'base64url').toString('utf8') !== passkey.userId)
    throw refused("user handle not the passkey's user");
  const counter = await verifyAssertion(deps, response, challenge, passkey);
  const use = await deps.store.passkeys.usePasskey(passkey.credentialId, counter, nowOf(deps));
  if (use !== 'used') throw refused(use);
  const user = await deps.store.users.getUser(passkey.userId);
  if (user === null || isDisabledHash(user.passwordHash)) throw refused('user gone or disabled');
  return { user, passkey };
}

/** The assertion's new signature counter, once its signature verifies. */
async function verifyAssertion(
  deps: PasskeyDeps,
  response: AuthenticationResponseJSON,
  challenge: string,
  passkey: PasskeyRecord,
): Promise<number> {
  try {
    const verified = await deps.webauthn.verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: deps.relyingParty.origin,
      expectedRPID: deps.relyingParty.id,
      credential: {
        id: passkey.credentialId,
        publicKey: new Uint8Array(Buffer.from(passkey.publicKey, 'base64url')),
        counter: passkey.counter,
        transports: passkey.transports,
      },
      requireUserVerification: true,
    });
    if (verified.verified) return verified.authenticationInfo.newCounter;
  } catch (err) {
    throw refused(err instanceof Error ? err.message : 'unreadable');
  }
  throw refused('signature');
}

function refused(why: string): GatewayError {
  return new GatewayError('invalid_credentials', 'The passkey was not accepted.', {
    detail: `passkey: ${why}`,
  });
}
