/** What the passkey operations (`passkeys.ts`, `passkey-sign-in.ts`) are built from. */
import type * as SimpleWebAuthn from '@simplewebauthn/server';
import type { AuditRecorder } from '../audit/recorder.js';
import type { Store } from '../store/types.js';

/** The WebAuthn relying party: the gateway at `publicUrl`. */
export interface RelyingParty {
  /** `mfa.passkeys.rpId`, else `publicUrl`'s host (`passkeyRpId`). */
  id: string;
  /** `mfa.passkeys.rpName`. */
  name: string;
  /** `publicUrl`'s origin: the only origin a ceremony is accepted from. */
  origin: string;
}

/**
 * The WebAuthn ceremonies of `@simplewebauthn/server`. Handed in, not
 * imported: the package takes ~0.4 s of CPU to load, so the composition root
 * loads it only when passkeys are on (`gateway/passkeys.ts`).
 */
export type WebAuthn = Pick<
  typeof SimpleWebAuthn,
  | 'generateRegistrationOptions'
  | 'verifyRegistrationResponse'
  | 'generateAuthenticationOptions'
  | 'verifyAuthenticationResponse'
>;

export interface PasskeyDeps {
  store: Pick<Store, 'passkeys' | 'sso' | 'users'>;
  audit: AuditRecorder;
  relyingParty: RelyingParty;
  webauthn: WebAuthn;
  /** Unix seconds (tests move it). */
  now?: () => number;
}

export const nowOf = (deps: PasskeyDeps): number => deps.now?.() ?? Math.floor(Date.now() / 1000);
