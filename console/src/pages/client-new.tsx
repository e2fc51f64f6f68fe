/** Creating a machine client: a name, scopes among the admin's own role's, an optional end date. */
import { useState } from 'preact/hooks';
import { call } from '../api';
import type { Me } from '../me';
import { Failure } from '../parts/status';
import { clientsPath } from './clients';

export function NewClient({
  me,
  onCreated,
}: {
  me: Me;
  onCreated: (label: string, secret: string) => void;
}) {
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const expires = String(form.get('expires') ?? '');
    const body = {
      name: String(form.get('name') ?? '').trim(),
      scopes: form.getAll('scope').map(String),
      ...(expires === '' ? {} : { expires_at: Math.floor(new Date(expires).getTime() / 1000) }),
    };
    setBusy(true);
    setError(undefined);
    try {
      const made = await call<{ client_id: string; client_secret: string }>(
        'POST',
        clientsPath(me),
        { body },
      );
      formElement.reset();
      onCreated(`Secret of ${body.name} (client id ${made.client_id})`, made.client_secret);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="new-client-title">
      <h2 id="new-client-title">New machine client</h2>
      <form onSubmit={submit}>
        <label for="client-name">Name</label>
        <input id="client-name" name="name" required maxLength={200} />
        <fieldset>
          <legend>Scopes (at most your own)</legend>
          {me.scopes.length === 0 ? <p class="muted">Your role has no scopes to give.</p> : null}
          {me.scopes.map((scope) => (
            <label key={scope} class="choice">
              <input type="checkbox" name="scope" value={scope} /> {scope}
            </label>
          ))}
        </fieldset>
        <label for="client-expires">Ends (optional)</label>
        <input id="client-expires" name="expires" type="datetime-local" />
        <button type="submit" disabled={busy}>
          Create client
        </button>
      </form>
      {error === undefined ? null : <Failure error={error} />}
    </section>
  );
}
