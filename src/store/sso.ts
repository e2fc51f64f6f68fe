/**
 * The sso slice of the store (`Store.sso`): the browser sign-in's one-time
 * records. Implemented by `memory-sso.ts` and `redis-sso.ts`.
 */

/**
 * What a one-time browser sign-in record is: a pending sign-in at an IdP (by
 * its `state`), a gateway code, or a sign-in page's proven password waiting
 * for the tenant choice (`api/sign-in/pending.ts`).
 */
export type SsoRecordKind = 'sign-in' | 'code' | 'sign-in-pending';

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
}
