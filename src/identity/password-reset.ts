/**
 * Password reset (issue 45). `POST /1/password-resets {email}` is answered
 * 202 before anything depends on the address: the per-IP budget (429 past
 * `limits.passwordReset.perIp`) and the address's syntax are all that is
 * looked at first; the lookup, the per-address budget (past `perEmail`
 * nothing more is sent) and the mail happen after the answer, in the
 * background, so a known and an unknown address get the same answer after
 * the same work. A mail goes only to a user with a password of their own
 * that is not disabled (a user of an identity provider signs in there).
 *
 * `POST /1/password-resets/{token} {password}` sets the password through the
 * one password change (`accounts.changePassword`: the session version moves
 * on, so every token, refresh family and browser session of the user is
 * refused on every instance before it resolves), marks the address verified
 * (the link proved the mailbox), and records `password_reset`.
 */
import { checkEmail } from '../auth/accounts.js';
import { hasNoPassword } from '../auth/passwords/no-password.js';
import { checkPasswordPolicy } from '../auth/passwords/passwords.js';
import { isDisabledHash } from '../auth/revocation/disabled.js';
import { GatewayError } from '../errors.js';
import { passwordResetMail } from '../mail/account-mails.js';
import type { UserRecord } from '../store/types.js';
import { type AccountMailDeps, type ActorOf } from './account-mail.js';
import { markVerified } from './email-verification.js';
import { issueLink, readLink, takeLink } from './mailed-links.js';

/**
 * Takes a point of the client IP's budget and checks the address's syntax;
 * then the rest goes on after the caller has answered (`setImmediate`).
 * Nothing awaited here depends on whether the address has an account.
 * @throws GatewayError `too_many_requests` (Retry-After), `invalid_request`
 */
export async function requestPasswordReset(
  deps: AccountMailDeps,
  request: { clientIp: string; actorOf: ActorOf },
  email: string,
): Promise<void> {
  const point = await deps.counters.resetsByIp.reserve(request.clientIp);
  if (!point.granted) {
    throw new GatewayError(
      'too_many_requests',
      'Too many password resets from this address: try again later.',
      { headers: { 'retry-after': String(point.retryAfter) } },
    );
  }
  const address = checkEmail(email);
  const actor = request.actorOf(address);
  setImmediate(() => {
    mailResetLink(deps, actor, address).catch((err: unknown) =>
      deps.log.error({ err }, 'password reset: the link was not mailed'),
    );
  });
}

/** After the answer: the address's budget, the lookup, the link, the mail, the audit event. */
async function mailResetLink(
  deps: AccountMailDeps,
  actor: ReturnType<ActorOf>,
  email: string,
): Promise<void> {
  const point = await deps.counters.resetMailsByEmail.reserve(email);
  if (!point.granted) return;
  const user = await deps.store.users.findUserByEmail(email);
  if (user === null || !resettable(user)) return;
  const link = await issueLink(deps, 'password-reset', user);
  deps.mailer.send(passwordResetMail(user.email, link));
  await deps.audit.record('password_reset_requested', actor, {
    user_id: user.id,
    user_email: user.email,
  });
}

/** A user with a password of their own, not disabled: a reset would not open another way in. */
function resettable(user: UserRecord): boolean {
  return !isDisabledHash(user.passwordHash) && !hasNoPassword(user.passwordHash);
}

/**
 * The user of a live reset link (the link left in place: the page's GET).
 * @throws GatewayError `not_found`
 */
export async function resetLinkUser(deps: AccountMailDeps, token: string): Promise<UserRecord> {
  const user = await readLink(deps.store, 'password-reset', token);
  if (!resettable(user)) throw new GatewayError('not_found', 'This link is not valid.');
  return user;
}

/**
 * Sets the password of the link's user (the link used up), ends every
 * session of theirs everywhere, marks the address verified; records
 * `password_reset`. The password is checked before the link is used, so a
 * password the policy refuses leaves the link good for another try.
 * @throws GatewayError `invalid_request` (the password policy), `not_found` (the link)
 */
export async function resetPassword(
  deps: AccountMailDeps,
  actorOf: ActorOf,
  token: string,
  password: string,
): Promise<UserRecord> {
  checkPasswordPolicy(password);
  const user = await takeLink(deps.store, 'password-reset', token);
  if (!resettable(user)) throw new GatewayError('not_found', 'This link is not valid.');
  // The link dies with a password set since it was mailed, also one set by
  // another link of the user's while this one's hash was being computed.
  if (!(await deps.accounts.changePassword(user, password, { unlessChanged: true })))
    throw new GatewayError('not_found', 'This link is not valid.');
  await markVerified(deps, actorOf, user);
  await deps.audit.record('password_reset', actorOf(user.email), {
    user_id: user.id,
    user_email: user.email,
  });
  return user;
}
