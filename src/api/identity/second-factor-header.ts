/**
 * `X-OTP` on a password login (issue 45): every Basic endpoint proves the
 * user's second factor with it after the password (`callers.ts` `logIn`),
 * through the one check (`auth/factors/second-factor.ts`). The sign-in page
 * asks for the code on a step of its own instead.
 */
import type { AuditActor } from '../../audit/events.js';
import type { UserRecord } from '../../store/types.js';
import type { ApiContext } from '../state.js';
import type { IdentityRouterDeps } from './deps.js';

/** The header a second-factor code comes in. */
export const X_OTP = 'x-otp';

/**
 * Proves the Basic-authenticated user's second factor by `X-OTP`; nothing
 * when TOTP is off (`mfa.totp.enabled: false`) or the user has none.
 * @throws GatewayError `mfa_required`, `too_many_requests`
 */
export async function proveLoginFactor(
  deps: IdentityRouterDeps,
  ctx: ApiContext,
  user: UserRecord,
  who: AuditActor,
): Promise<void> {
  await deps.secondFactors?.prove(user, ctx.get(X_OTP) || undefined, who);
}
