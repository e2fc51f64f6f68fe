/**
 * The account's passkeys (`/1/users/current/passkeys`): the list with last
 * use; add one — the gateway's creation options, the browser's
 * `navigator.credentials.create`, its answer posted with a name; remove one
 * after confirming. A passkey signs in on the sign-in page alone.
 */
import { useState } from 'preact/hooks';
import { call, get, seg } from '../api';
import { useAction } from '../parts/action';
import { Confirm } from '../parts/confirm';
import { useLoad } from '../parts/load';
import { Done, Empty, Failure, Loading } from '../parts/status';
import { when } from '../parts/time';
import { canMakePasskeys, makePasskey, type CreationOptions } from '../parts/webauthn';

const PASSKEYS = '/1/users/current/passkeys';

interface Passkey {
  passkey_id: string;
  name: string;
  created_at: number;
  last_used_at: number | null;
}

export function PasskeysSection() {
  const [loaded, again] = useLoad(() => get<{ passkeys: Passkey[] }>(PASSKEYS), []);
  const { run, error, done } = useAction(again);
  const [removing, setRemoving] = useState<Passkey | undefined>(undefined);
  const add = (name: string) =>
    run(async () => {
      const options = await call<CreationOptions>('POST', `${PASSKEYS}/options`);
      const response = await makePasskey(options);
      const made = await call<Passkey>('POST', PASSKEYS, {
        body: { response, ...(name === '' ? {} : { name }) },
      });
      return `The passkey “${made.name}” is added: use it on the sign-in page.`;
    });
  const remove = (passkey: Passkey) =>
    run(async () => {
      setRemoving(undefined);
      await call('DELETE', `${PASSKEYS}/${seg(passkey.passkey_id)}`);
      return `The passkey “${passkey.name}” is removed.`;
    });
  return (
    <section aria-labelledby="passkeys-title">
      <h2 id="passkeys-title">Passkeys</h2>
      <p class="muted">
        A passkey signs you in without a password or a code: your device or password manager keeps
        it, unlocked by your fingerprint, face or PIN.
      </p>
      {done === undefined ? null : <Done>{done}</Done>}
      {error === undefined ? null : <Failure error={error} />}
      {loaded.state === 'loading' ? <Loading what="your passkeys" /> : null}
      {loaded.state === 'failed' ? <Failure error={loaded.error} /> : null}
      {loaded.state === 'ready' && loaded.value.passkeys.length === 0 ? (
        <Empty>No passkeys.</Empty>
      ) : null}
      {loaded.state === 'ready' && loaded.value.passkeys.length > 0 ? (
        <ul class="plain passkeys">
          {loaded.value.passkeys.map((p) => (
            <li key={p.passkey_id}>
              <strong>{p.name}</strong> — added {when(p.created_at)}, last used{' '}
              {p.last_used_at === null ? 'never' : when(p.last_used_at)}{' '}
              <button type="button" class="danger small" onClick={() => setRemoving(p)}>
                Remove<span class="visually-hidden"> passkey {p.name}</span>
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      {canMakePasskeys() ? (
        // A new form (its name field empty) once the list has changed.
        <AddPasskey
          key={loaded.state === 'ready' ? loaded.value.passkeys.length : -1}
          onAdd={(name) => void add(name)}
        />
      ) : (
        <p class="muted">This browser cannot make passkeys.</p>
      )}
      {removing === undefined ? null : (
        <Confirm
          title={`Remove the passkey “${removing.name}”?`}
          body="It no longer signs you in. Remove it from your device or password manager too."
          action="Remove passkey"
          onConfirm={() => void remove(removing)}
          onCancel={() => setRemoving(undefined)}
        />
      )}
    </section>
  );
}

function AddPasskey({ onAdd }: { onAdd: (name: string) => void }) {
  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    onAdd(String(form.get('name') ?? '').trim());
  };
  return (
    <form onSubmit={submit}>
      <label for="passkey-name">A name to tell it by (optional)</label>
      <input id="passkey-name" name="name" maxLength={64} placeholder="This laptop" />
      <button type="submit">Add a passkey</button>
    </form>
  );
}
