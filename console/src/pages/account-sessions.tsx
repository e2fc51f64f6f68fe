/** The user's own sessions (`GET /1/sessions`): browser sessions and refresh-token logins, each with "end". */
import { useState } from 'preact/hooks';
import { call, get, seg } from '../api';
import { Confirm } from '../parts/confirm';
import { useLoad } from '../parts/load';
import { Empty, Failure, Loading } from '../parts/status';
import { when } from '../parts/time';
import { signInAgain } from '../signed-out';

interface Session {
  session_id: string;
  kind: 'browser' | 'refresh';
  tenant_id: string;
  created_at: number;
  last_seen_at: number | null;
  user_agent: string | null;
  ip: string | null;
  current: boolean;
}

export function SessionList() {
  const [loaded, again] = useLoad(() => get<{ sessions: Session[] }>('/1/sessions'), []);
  const [ending, setEnding] = useState<Session | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const end = async (session: Session) => {
    setEnding(undefined);
    try {
      await call('DELETE', `/1/sessions/${seg(session.session_id)}`);
      if (session.current) signInAgain();
      else again();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section aria-labelledby="sessions-title">
      <h2 id="sessions-title">Where you are signed in</h2>
      {error === undefined ? null : <Failure error={error} />}
      {loaded.state === 'loading' ? <Loading what="your sessions" /> : null}
      {loaded.state === 'failed' ? <Failure error={loaded.error} /> : null}
      {loaded.state === 'ready' && loaded.value.sessions.length === 0 ? (
        <Empty>No sessions.</Empty>
      ) : null}
      {loaded.state === 'ready' && loaded.value.sessions.length > 0 ? (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Kind</th>
                <th scope="col">Tenant</th>
                <th scope="col">Since</th>
                <th scope="col">Last seen</th>
                <th scope="col">Browser or app</th>
                <th scope="col">
                  <span class="visually-hidden">Action</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {loaded.value.sessions.map((s) => (
                <tr key={s.session_id}>
                  <td>
                    {s.kind === 'browser' ? 'Browser' : 'App (refresh token)'}
                    {s.current ? ' — this one' : ''}
                  </td>
                  <td>{s.tenant_id}</td>
                  <td>{when(s.created_at)}</td>
                  <td>{when(s.last_seen_at)}</td>
                  <td>
                    {s.user_agent ?? '—'} {s.ip === null ? '' : `(${s.ip})`}
                  </td>
                  <td>
                    <button type="button" class="secondary" onClick={() => setEnding(s)}>
                      End<span class="visually-hidden"> session {s.session_id}</span>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {ending === undefined ? null : (
        <Confirm
          title="End this session?"
          body={
            ending.current
              ? 'This is the session you are using: you will be signed out.'
              : 'Whoever uses it is signed out at once, on every instance.'
          }
          action="End session"
          onConfirm={() => void end(ending)}
          onCancel={() => setEnding(undefined)}
        />
      )}
    </section>
  );
}
