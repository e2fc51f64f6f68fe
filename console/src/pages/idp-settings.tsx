/** The tenant's identity provider (`GET/PUT/DELETE /1/tenants/{t}/idp`); the client secret is write-only. */
import { useState } from 'preact/hooks';
import { ApiError, call, seg } from '../api';
import type { Me } from '../me';
import { Confirm } from '../parts/confirm';
import { useAction } from '../parts/action';
import { useLoad } from '../parts/load';
import { Done, Failure, Loading } from '../parts/status';

interface Idp {
  issuer: string;
  client_id: string;
  client_secret_set: boolean;
  domains: string[];
  role: 'admin' | 'member';
  link_existing: boolean;
}

const idpPath = (me: Me) => `/1/tenants/${seg(me.tenant_id)}/idp`;

async function loadIdp(me: Me): Promise<Idp | null> {
  try {
    return await call<Idp>('GET', idpPath(me));
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

export function IdpSettings({ me }: { me: Me }) {
  const [loaded, again] = useLoad(() => loadIdp(me), [me.tenant_id]);
  const [removing, setRemoving] = useState(false);
  const { run, error, done } = useAction(again);
  const save = (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const secret = String(form.get('client_secret') ?? '');
    const body = {
      issuer: String(form.get('issuer') ?? '').trim(),
      client_id: String(form.get('client_id') ?? '').trim(),
      ...(secret === '' ? {} : { client_secret: secret }),
      domains: String(form.get('domains') ?? '')
        .split(/[\s,]+/)
        .filter((d) => d !== ''),
      role: String(form.get('role') ?? 'member'),
      link_existing: form.get('link_existing') === 'on',
    };
    void run(async () => {
      await call('PUT', idpPath(me), { body });
      return 'The identity provider is set.';
    });
  };
  const idp = loaded.state === 'ready' ? loaded.value : null;
  return (
    <section aria-labelledby="idp-title">
      <h2 id="idp-title">Identity provider</h2>
      {loaded.state === 'loading' ? <Loading what="the identity provider" /> : null}
      {loaded.state === 'failed' ? <Failure error={loaded.error} /> : null}
      {loaded.state === 'ready' ? (
        <form onSubmit={save} key={idp === null ? 'none' : idp.issuer}>
          <p class="muted">{idp === null ? 'None set: set one below.' : `Set: ${idp.issuer}`}</p>
          <label for="idp-issuer">Issuer URL</label>
          <input id="idp-issuer" name="issuer" type="url" required value={idp?.issuer ?? ''} />
          <label for="idp-client-id">Client id</label>
          <input id="idp-client-id" name="client_id" required value={idp?.client_id ?? ''} />
          <label for="idp-client-secret">
            Client secret{' '}
            {idp?.client_secret_set === true ? '(stored; leave empty to keep it)' : ''}
          </label>
          <input id="idp-client-secret" name="client_secret" type="password" autoComplete="off" />
          <label for="idp-domains">
            E-mail domains it vouches for (verified ones, separated by spaces)
          </label>
          <input id="idp-domains" name="domains" required value={idp?.domains.join(' ') ?? ''} />
          <label for="idp-role">Role given at first sign-in</label>
          <select id="idp-role" name="role" value={idp?.role ?? 'member'}>
            <option value="member">member</option>
            <option value="admin">admin</option>
          </select>
          <label class="choice">
            <input type="checkbox" name="link_existing" checked={idp?.link_existing ?? false} />{' '}
            Link an existing account with the same verified address
          </label>
          <div class="actions">
            <button type="submit">Save identity provider</button>
            {idp === null ? null : (
              <>
                <a
                  class="button secondary"
                  href={`/1/sign-in/sso?tenant_id=${seg(me.tenant_id)}&return_to=%2Fconsole%2F`}
                >
                  Try sign-in
                </a>
                <button type="button" class="danger" onClick={() => setRemoving(true)}>
                  Remove identity provider
                </button>
              </>
            )}
          </div>
        </form>
      ) : null}
      {done === undefined ? null : <Done>{done}</Done>}
      {error === undefined ? null : <Failure error={error} />}
      {removing ? (
        <Confirm
          title="Remove the identity provider?"
          body="Your people can no longer sign in with it; accounts it created stay, with no password until one is set."
          action="Remove identity provider"
          onConfirm={() => {
            setRemoving(false);
            void run(async () => {
              await call('DELETE', idpPath(me));
              return 'The identity provider is removed.';
            });
          }}
          onCancel={() => setRemoving(false)}
        />
      ) : null}
    </section>
  );
}
