/**
 * Which second factors a user has, for a front end to show (the console's
 * account page; `GET /1/users/current`): TOTP and passkeys, each only where
 * the gateway offers it (`mfa.totp.enabled`, `mfa.passkeys.enabled`). Never
 * a secret, a credential id or a recovery code: whether, and how many.
 */
import type { Store } from '../store/types.js';
import { totpFactorOf } from './totp.js';

export interface UserFactors {
  /** Undefined: TOTP is off on this gateway. */
  totp: { enrolled: boolean; recoveryCodesLeft: number | null } | undefined;
  /** Undefined: passkeys are off on this gateway. */
  passkeys: { count: number } | undefined;
}

/** What the gateway offers: which factors to look up. */
export interface FactorsOffered {
  totp: boolean;
  passkeys: boolean;
}

export async function userFactors(
  store: Pick<Store, 'totp' | 'passkeys'>,
  userId: string,
  offered: FactorsOffered,
): Promise<UserFactors> {
  const totp = offered.totp ? await totpFactorOf(store, userId) : undefined;
  const passkeys = offered.passkeys ? await store.passkeys.listPasskeys(userId) : undefined;
  return {
    totp: offered.totp
      ? { enrolled: totp !== undefined, recoveryCodesLeft: totp?.recovery_codes_left ?? null }
      : undefined,
    passkeys: passkeys === undefined ? undefined : { count: passkeys.length },
  };
}
