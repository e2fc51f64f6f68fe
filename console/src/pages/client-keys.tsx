/** A client's API keys: list (with last use), add (shown once), remove. */
import { useState } from 'preact/hooks';
import { call, get, seg } from '../api';
import type { Me } from '../me';
import { Confirm } from '../parts/confirm';
import { useLoad } from '../parts/load';
import { Empty, Failure, Loading } from '../parts/status';
import { when } from '../parts/time';
import { clientsPath, type Client } from './clients';

interface Key {
  key_id: string;
  created_at: number;
  expires_at: number | null;
  last_used_at: number | null;
}

export function ClientKeys({
  me,
  client,
  onKey,
}: {
  me: Me;
  client: Client;
  onKey: (label: string, key: string) => void;
}) {
  const path = `${clientsPath(me)}/${seg(client.client_id)}/keys`;
  const [loaded, again] = useLoad(() => get<{ keys: Key[] }>(path), [path]);
  const [removing, setRemoving] = useState<Key | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const run = async (work: () => Promise<void>) => {
    setError(undefined);
    try {
      await work();
      again();
    } catch (err) {
      setError(err);
    }
  };
  const add = () =>
    run(async () => {
      const made = await call<{ key_id: string; api_key: string }>('POST', path);
      onKey(`API key ${made.key_id} of ${client.name}`, made.api_key);
    });
  const remove = (key: Key) =>
    run(async () => {
      setRemoving(undefined);
      await call('DELETE', `${path}/${seg(key.key_id)}`);
    });
  return (
    <section aria-label={`API keys of ${client.name}`} class="keys">
      <h4>API keys</h4>
      {loaded.state === 'loading' ? <Loading what="the keys" /> : null}
      {loaded.state === 'failed' ? <Failure error={loaded.error} /> : null}
      {loaded.state === 'ready' && loaded.value.keys.length === 0 ? (
        <Empty>No API keys.</Empty>
      ) : null}
      {loaded.state === 'ready' && loaded.value.keys.length > 0 ? (
        <ul class="plain">
          {loaded.value.keys.map((k) => (
            <li key={k.key_id}>
              <code>{k.key_id}</code> — made {when(k.created_at)}, last used{' '}
              {k.last_used_at === null ? 'never' : when(k.last_used_at)}
              {k.expires_at === null ? '' : `, ends ${when(k.expires_at)}`}{' '}
              <button type="button" class="danger small" onClick={() => setRemoving(k)}>
                Remove<span class="visually-hidden"> key {k.key_id}</span>
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      <button type="button" class="secondary" onClick={() => void add()}>
        Add API key<span class="visually-hidden"> to {client.name}</span>
      </button>
      {error === undefined ? null : <Failure error={error} />}
      {removing === undefined ? null : (
        <Confirm
          title={`Remove the key ${removing.key_id}?`}
          body="Requests with it are refused at once, on every instance."
          action="Remove key"
          onConfirm={() => void remove(removing)}
          onCancel={() => setRemoving(undefined)}
        />
      )}
    </section>
  );
}
