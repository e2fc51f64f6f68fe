/**
 * A sign-in between its steps: the password proven, the tenant not yet
 * chosen (and, with a later issue, a second factor to come). Kept in the
 * store (the sso slice, kind `sign-in-pending`) for 5 minutes and taken once,
 * under SHA-256 of the browser's pre-session cookie, so only that browser can
 * continue it and any instance can. The password is never carried on: a
 * step proves it once.
 */
import { createHash } from 'node:crypto';
import type { SsoStore } from '../../store/sso.js';

export const PENDING_SECONDS = 300;

/** What the next step needs. */
export interface PendingSignIn {
  userId: string;
  email: string;
  /** Checked already (`return-to.ts`). */
  returnTo: string;
  /** The tenant the sign-in named (`tenant_id`), when it named one. */
  tenantId?: string | undefined;
  /**
   * The second factor is still to be proven (the code step): until it is,
   * no other step takes this record.
   */
  codeNeeded?: true;
}

function keyOf(preSession: string): string {
  return createHash('sha256').update(`${preSession}sign-in-pending`).digest('hex');
}

export async function putPending(
  store: SsoStore,
  preSession: string,
  pending: PendingSignIn,
): Promise<void> {
  await store.putSsoRecord(
    'sign-in-pending',
    keyOf(preSession),
    JSON.stringify(pending),
    PENDING_SECONDS,
  );
}

/** The pending sign-in of this pre-session cookie, removed; undefined when none (expired, taken). */
export async function takePending(
  store: SsoStore,
  preSession: string,
): Promise<PendingSignIn | undefined> {
  const value = await store.takeSsoRecord('sign-in-pending', keyOf(preSession));
  return value === null ? undefined : (JSON.parse(value) as PendingSignIn);
}
