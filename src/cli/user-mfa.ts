/**
 * `user mfa reset EMAIL` (issue 45): the operator's way back for a person
 * who lost both the authenticator and the recovery codes — the user's TOTP
 * factor (and a pending enrolment) removed without a code, audited as
 * `mfa_removed` with reason `reset`. The operation is `identity/totp.ts`'s,
 * as the API's. Check who is asking before running it: it leaves the
 * account with its password alone.
 */
import type { Command } from 'commander';
import type { LoadedConfig } from '../config/index.js';
import { resetTotp } from '../identity/totp.js';
import { userOf } from './sessions.js';
import { operator, print, withCore } from './store-command.js';

export async function userMfaReset(loaded: LoadedConfig, email: string): Promise<void> {
  await withCore(loaded, async (core) => {
    const user = await userOf(core, email);
    const removed = await resetTotp(core, operator(), user);
    print({ user_id: user.id, user_email: user.email, totp_removed: removed });
  });
}

/** Adds `user mfa reset` under `user`, `configurable` giving it `--config`. */
export function addUserMfa(
  user: Command,
  configurable: (command: Command) => Command,
  configOf: (command: Command) => Promise<LoadedConfig>,
): void {
  const mfa = user.command('mfa').description("a user's second factors");
  configurable(
    mfa
      .command('reset <email>')
      .description(
        "remove a user's TOTP factor and recovery codes (they lost both); they sign in with the password alone until they enrol again",
      ),
  ).action(async (email: string, _options: unknown, command: Command) =>
    userMfaReset(await configOf(command), email),
  );
}
