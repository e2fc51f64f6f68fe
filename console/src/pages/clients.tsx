/**
 * `/console/tenants/{t}/clients`: the tenant's machine clients — create one
 * with scopes (at most the admin's own role's), its secret shown once;
 * rotate; remove; and each client's API keys.
 */
import { useState } from 'preact/hooks';
import { call, get, seg } from '../api';
import type { Me } from '../me';
import { Confirm } from '../parts/confirm';
import { useLoad } from '../parts/load';
import { ShownOnce } from '../parts/secret';
import { Empty, Failure, Loading } from '../parts/status';
import { when } from '../parts/time';
import { ClientKeys } from './client-keys';
import { NewClient } from './client-new';

export interface Client {
  client_id: string;
  name: string;
  scopes: string[];
  created_at: number;
  expires_at: number | null;
  rotated_at: number | null;
}

export const clientsPath = (me: Me) => `/1/tenants/${seg(me.tenant_id)}/clients`;

type Pending = { kind: 'remove' | 'rotate'; client: Client } | undefined;

export function ClientsPage({ me }: { me: Me }) {
  const [loaded, again] = useLoad(
    () => get<{ clients: Client[] }>(clientsPath(me)),
    [me.tenant_id],
  );
  const [pending, setPending] = useState<Pending>(undefined);
  const [secret, setSecret] = useState<{ label: string; value: string } | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const act = async (p: NonNullable<Pending>) => {
    setPending(undefined);
    setError(undefined);
    const path = `${clientsPath(me)}/${seg(p.client.client_id)}`;
    try {
      if (p.kind === 'remove') {
        await call('DELETE', path);
        setSecret(undefined);
      } else {
        const rotated = await call<{ client_secret: string }>('POST', `${path}/secret`);
        setSecret({ label: `New secret of ${p.client.name}`, value: rotated.client_secret });
      }
      again();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <>
      <h1>Machine clients of {me.tenant_name}</h1>
      <NewClient me={me} onCreated={(label, value) => (setSecret({ label, value }), again())} />
      {secret === undefined ? null : <ShownOnce label={secret.label} value={secret.value} />}
      {error === undefined ? null : <Failure error={error} />}
      <section aria-labelledby="clients-title">
        <h2 id="clients-title">Clients</h2>
        {loaded.state === 'loading' ? <Loading what="the clients" /> : null}
        {loaded.state === 'failed' ? <Failure error={loaded.error} /> : null}
        {loaded.state === 'ready' && loaded.value.clients.length === 0 ? (
          <Empty>No machine clients yet. Create one above for a program that calls your API.</Empty>
        ) : null}
        {loaded.state === 'ready'
          ? loaded.value.clients.map((c) => (
              <article key={c.client_id} class="card" aria-labelledby={`client-${c.client_id}`}>
                <h3 id={`client-${c.client_id}`}>{c.name}</h3>
                <dl>
                  <dt>Client id</dt>
                  <dd>
                    <code>{c.client_id}</code>
                  </dd>
                  <dt>Scopes</dt>
                  <dd>{c.scopes.length === 0 ? 'none' : c.scopes.join(' ')}</dd>
                  <dt>Created</dt>
                  <dd>{when(c.created_at)}</dd>
                  <dt>Expires</dt>
                  <dd>{c.expires_at === null ? 'never' : when(c.expires_at)}</dd>
                </dl>
                <div class="actions">
                  <button
                    type="button"
                    class="secondary"
                    onClick={() => setPending({ kind: 'rotate', client: c })}
                  >
                    Rotate secret<span class="visually-hidden"> of {c.name}</span>
                  </button>
                  <button
                    type="button"
                    class="danger"
                    onClick={() => setPending({ kind: 'remove', client: c })}
                  >
                    Remove<span class="visually-hidden"> {c.name}</span>
                  </button>
                </div>
                <ClientKeys
                  me={me}
                  client={c}
                  onKey={(label, value) => setSecret({ label, value })}
                />
              </article>
            ))
          : null}
      </section>
      {pending === undefined ? null : (
        <Confirm
          title={
            pending.kind === 'remove'
              ? `Remove ${pending.client.name}?`
              : `Rotate the secret of ${pending.client.name}?`
          }
          body={
            pending.kind === 'remove'
              ? 'Its tokens and API keys stop working at once, on every instance. This cannot be undone.'
              : 'The old secret and the tokens it got stop working at once; the new secret is shown once.'
          }
          action={pending.kind === 'remove' ? 'Remove client' : 'Rotate secret'}
          onConfirm={() => void act(pending)}
          onCancel={() => setPending(undefined)}
        />
      )}
    </>
  );
}
