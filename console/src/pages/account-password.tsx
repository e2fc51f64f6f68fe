/**
 * Changing one's password (`PUT /1/users/{id}/password`, proven by the
 * current one): every session and token of the user ends on every instance,
 * this one included — so the page sends the user to sign in again.
 */
import { useState } from 'preact/hooks';
import { call, seg } from '../api';
import type { Me } from '../me';
import { Failure } from '../parts/status';

const basic = (email: string, password: string) => {
  const bytes = new TextEncoder().encode(`${email}:${password}`);
  return `Basic ${btoa(String.fromCharCode(...bytes))}`;
};

export function PasswordChange({ me }: { me: Me }) {
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const current = String(form.get('current') ?? '');
    const next = String(form.get('next') ?? '');
    setBusy(true);
    setError(undefined);
    try {
      await call('PUT', `/1/users/${seg(me.user_id)}/password`, {
        body: { password: next },
        headers: { authorization: basic(me.user_email, current) },
      });
      location.assign(`/1/sign-in?return_to=${encodeURIComponent('/console/account')}`);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="password-title">
      <h2 id="password-title">Password</h2>
      <form onSubmit={submit}>
        <label for="current-password">Current password</label>
        <input
          id="current-password"
          name="current"
          type="password"
          autoComplete="current-password"
          required
        />
        <label for="new-password">New password (8 to 72 bytes)</label>
        <input
          id="new-password"
          name="next"
          type="password"
          autoComplete="new-password"
          minLength={8}
          required
        />
        <p class="muted">Changing it signs you out everywhere, here too.</p>
        <button type="submit" disabled={busy}>
          Change password
        </button>
      </form>
      {error === undefined ? null : <Failure error={error} />}
    </section>
  );
}
