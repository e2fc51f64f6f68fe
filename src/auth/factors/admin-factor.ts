/**
 * `mfa.requiredForAdmins` (issue 45): a tenant's admin without a second
 * factor is refused what needs the admin role until they enrol one. The one
 * place that says what counts as a second factor: {@link hasSecondFactor}.
 */
import { GatewayError } from '../../errors.js';
import type { Store } from '../../store/types.js';

/**
 * Whether the user has a confirmed TOTP authenticator (a pending enrolment is
 * none): what a password login must then be followed by.
 */
export async function hasTotp(store: Pick<Store, 'totp'>, userId: string): Promise<boolean> {
  return (await store.totp.getTotp(userId))?.secretSealed !== undefined;
}

/**
 * Whether the user has a second factor: a confirmed TOTP authenticator or a
 * passkey (which signs in as both factors).
 */
export async function hasSecondFactor(
  store: Pick<Store, 'totp' | 'passkeys'>,
  userId: string,
): Promise<boolean> {
  if (await hasTotp(store, userId)) return true;
  return (await store.passkeys.listPasskeys(userId)).length > 0;
}

/**
 * @param required `mfa.requiredForAdmins`
 * @throws GatewayError `forbidden` (detail `second_factor_missing`) when a
 * second factor is required of admins and the user has none
 */
export async function requireAdminSecondFactor(
  store: Pick<Store, 'totp' | 'passkeys'>,
  required: boolean,
  userId: string,
): Promise<void> {
  if (!required || (await hasSecondFactor(store, userId))) return;
  throw new GatewayError(
    'forbidden',
    "This tenant's admins need a second factor: enrol one (an authenticator app: POST /1/users/current/mfa/totp; or a passkey) before acting as an admin.",
    { detail: 'second_factor_missing' },
  );
}
