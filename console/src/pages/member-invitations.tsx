/** Inviting people by e-mail with a role, and the pending invitations (revoke). */
import { useState } from 'preact/hooks';
import { call, get, seg } from '../api';
import type { Me } from '../me';
import { Confirm } from '../parts/confirm';
import { useAction } from '../parts/action';
import { useLoad } from '../parts/load';
import { Done, Empty, Failure, Loading } from '../parts/status';
import { when } from '../parts/time';

interface Invitation {
  invitation_id: string;
  email: string;
  role: 'admin' | 'member';
  expires_at: number;
}

const invitationsPath = (me: Me) => `/1/tenants/${seg(me.tenant_id)}/invitations`;

export function Invitations({ me }: { me: Me }) {
  const [loaded, again] = useLoad(
    () => get<{ invitations: Invitation[] }>(invitationsPath(me)),
    [me.tenant_id],
  );
  const [revoking, setRevoking] = useState<Invitation | undefined>(undefined);
  const { run, error, done } = useAction(again);
  const invite = (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    const body = {
      email: String(data.get('email') ?? '').trim(),
      role: String(data.get('role') ?? 'member'),
    };
    void run(async () => {
      const made = await call<Invitation>('POST', invitationsPath(me), { body });
      form.reset();
      return `Invitation mailed to ${made.email}; it expires ${when(made.expires_at)}.`;
    });
  };
  const revoke = (i: Invitation) =>
    run(async () => {
      setRevoking(undefined);
      await call('DELETE', `${invitationsPath(me)}/${seg(i.invitation_id)}`);
      return `The invitation of ${i.email} is revoked.`;
    });
  return (
    <section aria-labelledby="invite-title">
      <h2 id="invite-title">Invite someone</h2>
      <form onSubmit={invite}>
        <label for="invite-email">E-mail</label>
        <input id="invite-email" name="email" type="email" required autoComplete="off" />
        <label for="invite-role">Role</label>
        <select id="invite-role" name="role">
          <option value="member">member</option>
          <option value="admin">admin</option>
        </select>
        <button type="submit">Send invitation</button>
      </form>
      {done === undefined ? null : <Done>{done}</Done>}
      {error === undefined ? null : <Failure error={error} />}
      <h3>Pending invitations</h3>
      {loaded.state === 'loading' ? <Loading what="the invitations" /> : null}
      {loaded.state === 'failed' ? <Failure error={loaded.error} /> : null}
      {loaded.state === 'ready' && loaded.value.invitations.length === 0 ? (
        <Empty>No pending invitations.</Empty>
      ) : null}
      {loaded.state === 'ready' && loaded.value.invitations.length > 0 ? (
        <ul class="plain">
          {loaded.value.invitations.map((i) => (
            <li key={i.invitation_id}>
              {i.email} as {i.role}, expires {when(i.expires_at)}{' '}
              <button type="button" class="danger small" onClick={() => setRevoking(i)}>
                Revoke<span class="visually-hidden"> the invitation of {i.email}</span>
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      {revoking === undefined ? null : (
        <Confirm
          title={`Revoke the invitation of ${revoking.email}?`}
          body="Its link stops working at once."
          action="Revoke invitation"
          onConfirm={() => void revoke(revoking)}
          onCancel={() => setRevoking(undefined)}
        />
      )}
    </section>
  );
}
