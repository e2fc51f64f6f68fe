/** `/console/account`: anyone's own account — password, second factors, sessions. */
import type { Me } from '../me';
import { PasskeysSection } from './account-passkeys';
import { PasswordChange } from './account-password';
import { SessionList } from './account-sessions';
import { TotpSection } from './account-totp';

export function AccountPage({ me }: { me: Me }) {
  return (
    <>
      <h1>Your account</h1>
      <p class="muted">
        Signed in as {me.user_email}, in {me.tenant_name} as {me.role}.
      </p>
      <PasswordChange me={me} />
      {me.second_factors.totp === null ? null : <TotpSection />}
      {me.second_factors.passkeys === null ? null : <PasskeysSection />}
      <SessionList />
    </>
  );
}
