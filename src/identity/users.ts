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
import type { Actor } from './actor.js';

export interface UserDeps {
  accounts: Accounts;
  audit: AuditRecorder;
}

/**
 * Creates a user with their personal tenant; records `user_created`.
 * @throws GatewayError `user_exists`, `invalid_request`, `forbidden` (an
 * address of a domain a tenant manages, by anyone but the operator)
 */
export async function createUser(
  deps: UserDeps,
  actor: Actor,
  input: { email: string; password: string; name?: string | undefined },
): Promise<UserRecord> {
  const user = await deps.accounts.signUp({
    email: input.email,
    password: input.password,
    ...(input.name === undefined ? {} : { name: input.name }),
    byOperator: actor.kind === 'operator',
  });
  await deps.audit.record('user_created', actor.audit, {
    tenant_id: user.personalTenantId,
    user_id: user.id,
    user_email: user.email,
  });
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
