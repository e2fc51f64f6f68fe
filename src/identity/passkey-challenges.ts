/**
 * WebAuthn challenges (issue 45), kept server-side: random (from
 * `@simplewebauthn/server`), short-lived ({@link CHALLENGE_SECONDS}), taken
 * once, and bound to what the browser holds — a registration's to the browser
 * session (its id), a sign-in's to the sign-in page's pre-session cookie —
 * under SHA-256 of that value in the store's sso slice, so any instance can
 * check it and no other browser can use it.
 */
import { createHash } from 'node:crypto';
import type { SsoStore } from '../store/sso.js';

/** How long a ceremony may take: the options' `timeout` and the challenge's life. */
export const CHALLENGE_SECONDS = 300;

export type ChallengeKind = 'passkey-registration' | 'passkey-sign-in';

function keyOf(kind: ChallengeKind, boundTo: string): string {
  return createHash('sha256').update(`${boundTo}\u0000${kind}`).digest('hex');
}

/** Keeps `challenge` for the holder of `boundTo`, replacing an earlier one. */
export async function keepChallenge(
  store: SsoStore,
  kind: ChallengeKind,
  boundTo: string,
  challenge: string,
): Promise<void> {
  await store.putSsoRecord(kind, keyOf(kind, boundTo), challenge, CHALLENGE_SECONDS);
}

/** The holder's challenge, removed; undefined when none (never asked, expired, used). */
export async function takeChallenge(
  store: SsoStore,
  kind: ChallengeKind,
  boundTo: string,
): Promise<string | undefined> {
  return (await store.takeSsoRecord(kind, keyOf(kind, boundTo))) ?? undefined;
}
