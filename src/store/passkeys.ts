/**
 * Users' passkeys (WebAuthn credentials, issue 45): registered while signed
 * in, signing in on the sign-in page as both factors. The passkeys slice of
 * the store (`Store.passkeys`); implemented by `memory-passkeys.ts` and
 * `redis-passkeys.ts`. A user's removal (`removeUser`) removes their passkeys
 * in the same write.
 */

/** One passkey of one user. */
export interface PasskeyRecord {
  /** The id the API names it by (`passkey_id`): random, never the credential id. */
  passkeyId: string;
  /** The WebAuthn credential id, base64url: unique in the store. */
  credentialId: string;
  userId: string;
  /** The credential's COSE public key, base64url. */
  publicKey: string;
  /** The authenticator's signature counter as last seen (0: it keeps none). */
  counter: number;
  /** What the browser said the authenticator speaks (`internal`, `hybrid`, `usb`, …). */
  transports: string[];
  /** A name the user gave it (or the default). */
  name: string;
  /** Unix seconds. */
  createdAt: number;
  /** Unix seconds of its last sign-in; absent until then. */
  lastUsedAt?: number;
}

/** The most passkeys one user may hold. */
export const MAX_USER_PASSKEYS = 20;

/**
 * What a use of a passkey did: `used` (the counter and the time written),
 * `counter_regressed` (refused, nothing written: see {@link PasskeyStore.usePasskey}),
 * `missing` (no such passkey: removed meanwhile).
 */
export type PasskeyUse = 'used' | 'counter_regressed' | 'missing';

/** What adding a passkey did. */
export type PasskeyAdded = 'added' | 'credential_taken' | 'too_many' | 'no_user';

/** The store's passkeys. */
export interface PasskeyStore {
  /**
   * Adds the passkey, atomically refused when its credential id is stored
   * already (any user's), when the user holds {@link MAX_USER_PASSKEYS}, or
   * when there is no such user.
   */
  addPasskey(record: PasskeyRecord): Promise<PasskeyAdded>;
  /** The user's passkeys, oldest first (then by id). */
  listPasskeys(userId: string): Promise<PasskeyRecord[]>;
  /** The passkey of this credential id; null when none. */
  getPasskey(credentialId: string): Promise<PasskeyRecord | null>;
  /**
   * Records a sign-in with the passkey: its new signature counter and the
   * time. WebAuthn §6.1.1 (the signature counter): when the stored or the new
   * counter is not 0, the new one must be greater than the stored one, else
   * the authenticator may have been cloned — refused (`counter_regressed`),
   * nothing written. Both 0: an authenticator without a counter (most synced
   * passkeys), accepted. Checked and written in one atomic step, so of two
   * sign-ins with the same counter one wins.
   */
  usePasskey(credentialId: string, counter: number, at: number): Promise<PasskeyUse>;
  /**
   * Removes the user's passkey `passkeyId` (only theirs: another user's id
   * removes nothing). @returns the removed record; null when the user has none of that id.
   */
  removePasskey(userId: string, passkeyId: string): Promise<PasskeyRecord | null>;
}

/** The WebAuthn counter rule of {@link PasskeyStore.usePasskey}. */
export function counterAccepted(stored: number, presented: number): boolean {
  if (stored === 0 && presented === 0) return true;
  return presented > stored;
}
