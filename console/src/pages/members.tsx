/**
 * `/console/tenants/{t}/members`: the members with their roles and how they
 * joined; invite by e-mail with a role; change a role; remove. Each change
 * ends the member's tokens and sessions for the tenant at once.
 */
import { useState } from 'preact/hooks';
import { call, get, seg } from '../api';
import type { Me } from '../me';
import { Confirm } from '../parts/confirm';
import { useAction } from '../parts/action';
import { useLoad } from '../parts/load';
import { Done, Empty, Failure, Loading } from '../parts/status';
import { when } from '../parts/time';
import { Invitations } from './member-invitations';

interface Member {
  user_id: string;
  email: string;
  role: 'admin' | 'member';
  joined_at: number | null;
  federated: boolean;
}

export const membersPath = (me: Me) => `/1/tenants/${seg(me.tenant_id)}/members`;

export function MembersPage({ me }: { me: Me }) {
  const [loaded, again] = useLoad(
    () => get<{ members: Member[] }>(membersPath(me)),
    [me.tenant_id],
  );
  const [removing, setRemoving] = useState<Member | undefined>(undefined);
  const { run, error, done } = useAction(again);
  const changeRole = (m: Member, role: string) =>
    run(async () => {
      await call('PUT', `${membersPath(me)}/${seg(m.user_id)}`, { body: { role } });
      return `${m.email} is now ${role}.`;
    });
  const remove = (m: Member) =>
    run(async () => {
      setRemoving(undefined);
      await call('DELETE', `${membersPath(me)}/${seg(m.user_id)}`);
      return `${m.email} is no longer a member.`;
    });
  return (
    <>
      <h1>Members of {me.tenant_name}</h1>
      <Invitations me={me} />
      <section aria-labelledby="members-title">
        <h2 id="members-title">Members</h2>
        {done === undefined ? null : <Done>{done}</Done>}
        {error === undefined ? null : <Failure error={error} />}
        {loaded.state === 'loading' ? <Loading what="the members" /> : null}
        {loaded.state === 'failed' ? <Failure error={loaded.error} /> : null}
        {loaded.state === 'ready' && loaded.value.members.length === 0 ? (
          <Empty>No members.</Empty>
        ) : null}
        {loaded.state === 'ready' && loaded.value.members.length > 0 ? (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">E-mail</th>
                  <th scope="col">Role</th>
                  <th scope="col">Joined</th>
                  <th scope="col">
                    <span class="visually-hidden">Action</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {loaded.value.members.map((m) => (
                  <tr key={m.user_id}>
                    <td>
                      {m.email}
                      {m.user_id === me.user_id ? ' (you)' : ''}
                    </td>
                    <td>
                      <label class="visually-hidden" for={`role-${m.user_id}`}>
                        Role of {m.email}
                      </label>
                      <select
                        id={`role-${m.user_id}`}
                        value={m.role}
                        onChange={(e) =>
                          void changeRole(m, (e.currentTarget as HTMLSelectElement).value)
                        }
                      >
                        <option value="member">member</option>
                        <option value="admin">admin</option>
                      </select>
                    </td>
                    <td>
                      {when(m.joined_at)}
                      {m.federated ? ' — through the identity provider' : ''}
                    </td>
                    <td>
                      <button type="button" class="danger" onClick={() => setRemoving(m)}>
                        Remove<span class="visually-hidden"> {m.email}</span>
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </section>
      {removing === undefined ? null : (
        <Confirm
          title={`Remove ${removing.email}?`}
          body={`Their tokens and sessions for ${me.tenant_name} end at once, on every instance.`}
          action="Remove member"
          onConfirm={() => void remove(removing)}
          onCancel={() => setRemoving(undefined)}
        />
      )}
    </>
  );
}
