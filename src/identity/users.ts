/**
 * A user's account, created and given a new password once for the identity
 * API (`POST /1/users` and `PUT /1/users/{id}/password`, the user themselves)
 * and the CLI (`user add`, `user password`, the operator). The rules are the
 * accounts' (`auth/accounts.ts`: the e-mail, the password policy, addresses
 * of a domain a tenant manages); who acts decides what they may: only the
 * operator creates an address of any domain. Each records its audit event.
 */
import type { AuditRecorder } from '../audit/recorder.js';
import type { Accounts } from '../auth/accounts.js';
import type { UserRecord } from '../store/types.js';
import type { AccountMailDeps } from './account-mail.js';
import { requireOperator, type Actor } from './actor.js';
import { mailVerificationLink } from './email-verification.js';

export interface UserDeps {
  accounts: Accounts;
  audit: AuditRecorder;
  /** The mailed flows (`mail`): a signup with `signup.verifyEmail` is mailed its link. */
  accountMail?: AccountMailDeps | undefined;
}

/**
 * Creates a user with their personal tenant; records `user_created`. A user
 * signing up themselves while `signup.verifyEmail` is on is created
 * unverified and mailed a verification link; only the operator may create a
 * user verified (`user add --verified`).
 * @throws GatewayError `user_exists`, `invalid_request`, `forbidden` (an
 * address of a domain a tenant manages, by anyone but the operator; a
 * verified address, by anyone but the operator)
 */
export async function createUser(
  deps: UserDeps,
  actor: Actor,
  input: { email: string; password: string; name?: string | undefined; emailVerified?: boolean },
): Promise<UserRecord> {
  if (input.emailVerified === true) requireOperator(actor, 'vouch for an e-mail address');
  const user = await deps.accounts.signUp({
    email: input.email,
    password: input.password,
    ...(input.name === undefined ? {} : { name: input.name }),
    byOperator: actor.kind === 'operator',
    emailVerified: input.emailVerified === true,
  });
  await deps.audit.record('user_created', actor.audit, {
    tenant_id: user.personalTenantId,
    user_id: user.id,
    user_email: user.email,
  });
  const mail = deps.accountMail;
  if (actor.kind === 'self' && mail?.verifyEmail === true) await mailVerificationLink(mail, user);
  return user;
}

/**
 * Gives `user` a new password: every token issued before is refused from
 * now on; records `password_changed`.
 * @throws GatewayError `invalid_request` (the password policy)
 */
export async function changePassword(
  deps: UserDeps,
  actor: Actor,
  user: UserRecord,
  password: string,
): Promise<void> {
  await deps.accounts.changePassword(user, password);
  await deps.audit.record('password_changed', actor.audit, {
    user_id: user.id,
    user_email: user.email,
  });
}
