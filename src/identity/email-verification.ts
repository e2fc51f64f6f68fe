/**
 * Verified e-mail (issue 45, `signup.verifyEmail`): a user who signed up
 * proves they receive mail at their address by a mailed one-time link
 * (`POST /1/email-verifications/{token}`, 24 hours). Until then their
 * password does not sign in (403 `email_not_verified`, told only once the
 * password is proven right), and each such sign-in mails a new link, at most
 * `limits.passwordReset.perEmail` per address and window, so nobody can
 * flood a mailbox through it. The operator's word (`user add --verified`,
 * the seed's `email_verified`), an identity provider's verified e-mail and a
 * password reset (it proves the mailbox too) verify an address as well.
 */
import { GatewayError } from '../errors.js';
import { verificationMail } from '../mail/account-mails.js';
import type { UserRecord } from '../store/types.js';
import { type AccountMailDeps, type ActorOf } from './account-mail.js';
import { issueLink, readLink, takeLink } from './mailed-links.js';

/**
 * Mails `user` a new verification link, unless the address had its
 * `perEmail` mails this window (then nothing is sent, and nothing said).
 * @returns whether a mail was queued
 */
export async function mailVerificationLink(
  deps: AccountMailDeps,
  user: UserRecord,
): Promise<boolean> {
  const point = await deps.counters.verificationMailsByEmail.reserve(user.email);
  if (!point.granted) return false;
  const link = await issueLink(deps, 'email-verification', user);
  deps.mailer.send(verificationMail(user.email, link));
  return true;
}

/**
 * Verifies the address of the link's user (the link used up); records
 * `email_verified`.
 * @throws GatewayError `not_found` (the link is not live)
 */
export async function confirmEmail(
  deps: AccountMailDeps,
  actorOf: ActorOf,
  token: string,
): Promise<UserRecord> {
  const user = await takeLink(deps.store, 'email-verification', token);
  await markVerified(deps, actorOf, user);
  return user;
}

/** Marks the address verified (the first time kept) and records `email_verified` when it was not yet. */
export async function markVerified(
  deps: Pick<AccountMailDeps, 'store' | 'audit'>,
  actorOf: ActorOf,
  user: UserRecord,
): Promise<void> {
  if (user.emailVerifiedAt !== undefined) return;
  await deps.store.users.markEmailVerified(user.id, Math.floor(Date.now() / 1000));
  await deps.audit.record('email_verified', actorOf(user.email), {
    user_id: user.id,
    user_email: user.email,
  });
}

/**
 * The password sign-in rule: with verification on, a user whose address is
 * not verified is refused — only ever called once their password is proven
 * — and mailed a new link (bounded).
 * @throws GatewayError `email_not_verified`
 */
export async function requireVerifiedEmail(
  deps: AccountMailDeps | undefined,
  user: UserRecord,
): Promise<void> {
  if (deps === undefined || !deps.verifyEmail || user.emailVerifiedAt !== undefined) return;
  await mailVerificationLink(deps, user);
  throw new GatewayError(
    'email_not_verified',
    'The e-mail address is not verified yet: follow the link mailed to it, then sign in.',
  );
}

/**
 * The user of a live verification link, the link left in place (the page's
 * GET: a mail scanner's visit uses nothing).
 * @throws GatewayError `not_found`
 */
export function verificationLinkUser(deps: AccountMailDeps, token: string): Promise<UserRecord> {
  return readLink(deps.store, 'email-verification', token);
}
