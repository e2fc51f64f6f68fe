/**
 * A user's passkeys (issue 45), once for every front end: the identity API's
 * `/1/users/current/passkeys…` (a browser session only) and, later, the
 * console. Registration is a WebAuthn ceremony in two calls: the creation
 * options (a challenge kept for this browser session, `passkey-challenges.ts`),
 * then the browser's answer, verified against that challenge, `publicUrl`'s
 * origin and the rpId before anything is stored.
 *
 * What is asked of the authenticator: a discoverable credential (resident
 * key required: the sign-in page names no user, the passkey does) and user
 * verification required (a PIN or a biometric: the passkey counts as both
 * factors, so the authenticator must have checked the person, not only
 * their presence). Attestation `none`: the gateway trusts no vendor list.
 */
import { randomBytes } from 'node:crypto';
import type {
  PublicKeyCredentialCreationOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { GatewayError } from '../errors.js';
import type { PasskeyRecord, UserRecord } from '../store/types.js';
import type { Actor } from './actor.js';
import { CHALLENGE_SECONDS, keepChallenge, takeChallenge } from './passkey-challenges.js';
import { nowOf, type PasskeyDeps } from './passkey-deps.js';

export type { PasskeyDeps, RelyingParty, WebAuthn } from './passkey-deps.js';

/** A passkey as its user sees it: never its public key or credential id. */
export interface PasskeyView {
  passkeyId: string;
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
}

/** The name a passkey gets when its user gives none. */
export const DEFAULT_PASSKEY_NAME = 'Passkey';
/** The longest name a passkey may have (characters). */
export const MAX_PASSKEY_NAME = 64;

/** The user handle of a user's passkeys: their id's bytes (the sign-in reads it back). */
export function userHandleOf(userId: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(userId, 'utf8'));
}

/**
 * The creation options for `navigator.credentials.create`, its challenge kept
 * for `sessionId` (replacing an earlier one), the user's passkeys excluded.
 */
export async function registrationOptions(
  deps: PasskeyDeps,
  user: Pick<UserRecord, 'id' | 'email' | 'name'>,
  sessionId: string,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const existing = await deps.store.passkeys.listPasskeys(user.id);
  const options = await deps.webauthn.generateRegistrationOptions({
    rpName: deps.relyingParty.name,
    rpID: deps.relyingParty.id,
    userName: user.email,
    userID: userHandleOf(user.id),
    userDisplayName: user.name ?? user.email,
    timeout: CHALLENGE_SECONDS * 1000,
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports })),
    authenticatorSelection: {
      residentKey: 'required',
      requireResidentKey: true,
      userVerification: 'required',
    },
  });
  await keepChallenge(deps.store.sso, 'passkey-registration', sessionId, options.challenge);
  return options;
}

/** What the browser sends back to register a passkey. */
export interface Registration {
  response: RegistrationResponseJSON;
  name?: string | undefined;
}

/**
 * Verifies the browser's answer against the challenge kept for `sessionId`
 * (taken: one answer per options), `publicUrl`'s origin and the rpId, then
 * stores the passkey and records `passkey_added`.
 * @throws GatewayError `invalid_request` (no live challenge, an answer that
 * does not verify, a credential registered already, too many passkeys)
 */
export async function registerPasskey(
  deps: PasskeyDeps,
  actor: Actor,
  user: Pick<UserRecord, 'id' | 'email'>,
  sessionId: string,
  registration: Registration,
): Promise<PasskeyView> {
  const challenge = await takeChallenge(deps.store.sso, 'passkey-registration', sessionId);
  if (challenge === undefined)
    throw refused('No registration is under way here, or it expired: ask for new options.');
  const verified = await verifyRegistration(deps, registration.response, challenge);
  const record: PasskeyRecord = {
    passkeyId: `pk_${randomBytes(16).toString('base64url')}`,
    credentialId: verified.id,
    userId: user.id,
    publicKey: Buffer.from(verified.publicKey).toString('base64url'),
    counter: verified.counter,
    transports: transportsOf(registration.response),
    name: registration.name?.trim() || DEFAULT_PASSKEY_NAME,
    createdAt: nowOf(deps),
  };
  const added = await deps.store.passkeys.addPasskey(record);
  if (added === 'credential_taken') throw refused('This passkey is registered already.');
  if (added === 'too_many') throw refused('There are as many passkeys as an account may hold.');
  if (added === 'no_user') throw new GatewayError('invalid_token', 'The user no longer exists.');
  await deps.audit.record('passkey_added', actor.audit, {
    user_id: user.id,
    user_email: user.email,
    passkey_id: record.passkeyId,
  });
  return viewOf(record);
}

async function verifyRegistration(
  deps: PasskeyDeps,
  response: RegistrationResponseJSON,
  challenge: string,
) {
  try {
    const verified = await deps.webauthn.verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: deps.relyingParty.origin,
      expectedRPID: deps.relyingParty.id,
      requireUserVerification: true,
    });
    if (verified.verified) return verified.registrationInfo.credential;
  } catch (err) {
    throw refused(`The passkey's registration did not verify: ${describe(err)}`);
  }
  throw refused("The passkey's registration did not verify.");
}

/** The user's passkeys, oldest first. */
export async function listPasskeys(deps: PasskeyDeps, userId: string): Promise<PasskeyView[]> {
  return (await deps.store.passkeys.listPasskeys(userId)).map(viewOf);
}

/**
 * Removes the user's passkey and records `passkey_removed`. Another user's
 * id is `not_found`, as an id that never existed.
 */
export async function removePasskey(
  deps: PasskeyDeps,
  actor: Actor,
  user: Pick<UserRecord, 'id' | 'email'>,
  passkeyId: string,
): Promise<void> {
  const removed = await deps.store.passkeys.removePasskey(user.id, passkeyId);
  if (removed === null) throw new GatewayError('not_found', 'No such passkey.');
  await deps.audit.record('passkey_removed', actor.audit, {
    user_id: user.id,
    user_email: user.email,
    passkey_id: passkeyId,
  });
}

function viewOf(record: PasskeyRecord): PasskeyView {
  return {
    passkeyId: record.passkeyId,
    name: record.name,
    createdAt: record.createdAt,
    lastUsedAt: record.lastUsedAt ?? null,
  };
}

const TRANSPORT = /^[a-z-]{1,32}$/;

/** The transports the browser reported, as far as they look like transports (at most 8). */
function transportsOf(response: RegistrationResponseJSON): string[] {
  const transports: unknown = response.response.transports;
  if (!Array.isArray(transports)) return [];
  return transports
    .filter((t): t is string => typeof t === 'string' && TRANSPORT.test(t))
    .slice(0, 8);
}

/** A library error's message: about the browser's answer (its fields), never a secret. */
export function describe(err: unknown): string {
  return err instanceof Error ? err.message : 'unreadable';
}

function refused(description: string): GatewayError {
  return new GatewayError('invalid_request', description);
}
