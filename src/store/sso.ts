/**
 * The sso slice of the store (`Store.sso`): the browser sign-in's one-time
 * records, and the short-lived records of the IdP-side logouts (issue 44).
 * Implemented by `memory-sso.ts` and `redis-sso.ts`.
 */

/**
 * What a record is: a pending sign-in at an IdP (by its `state`) or a gateway
 * code; a sign-in page's proven password waiting for the tenant choice
 * (`sign-in-pending`, `api/sign-in/pending.ts`); a back-channel logout
 * token's `jti` seen (`logout-jti`, kept against replay); the user an IdP's
 * `sub` or `sid` names (`idp-subject`, `idp-sid`), written when a browser
 * session begins at the IdP and kept as long as the session may live; a
 * WebAuthn challenge (`passkey-registration` under the browser session,
 * `passkey-sign-in` under the sign-in page's pre-session cookie:
 * `identity/passkey-challenges.ts`), taken once; a
 * mailed one-time link (`email-verification`, `password-reset`: issue 45,
 * `identity/mailed-links.ts`) under the SHA-256 of its token, taken once.
 */
export type SsoRecordKind =
  | 'sign-in'
  | 'code'
  | 'sign-in-pending'
  | 'logout-jti'
  | 'idp-subject'
  | 'idp-sid'
  | 'passkey-registration'
  | 'passkey-sign-in'
  | 'email-verification'
  | 'password-reset';

/**
 * The browser sign-in's short-lived, single-use records (`auth/federation/browser-sign-in.ts`):
 * an opaque value under a random key, gone after `ttlSeconds` or its first take.
 */
export interface SsoStore {
  /** Writes `value` under `key` (replacing any), expiring after `ttlSeconds`. */
  putSsoRecord(kind: SsoRecordKind, key: string, value: string, ttlSeconds: number): Promise<void>;
  /**
   * The value under `key`, removed in the same atomic step: of two concurrent
   * takes at most one gets it. Null when absent, expired or already taken.
   */
  takeSsoRecord(kind: SsoRecordKind, key: string): Promise<string | null>;
  /** The value under `key`, left in place; null when absent or expired. */
  readSsoRecord(kind: SsoRecordKind, key: string): Promise<string | null>;
  /**
   * Writes `value` under `key` only when no live record is there, atomically:
   * of two concurrent adds at most one succeeds (a replay check).
   * @returns whether it was written.
   */
  addSsoRecord(
    kind: SsoRecordKind,
    key: string,
    value: string,
    ttlSeconds: number,
  ): Promise<boolean>;
}
