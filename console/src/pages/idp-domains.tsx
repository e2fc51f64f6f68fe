/** The tenant's e-mail domains: claim (the TXT record to publish), verify, remove. */
import { useState } from 'preact/hooks';
import { call, get, seg } from '../api';
import type { Me } from '../me';
import { Confirm } from '../parts/confirm';
import { useAction } from '../parts/action';
import { useLoad } from '../parts/load';
import { Done, Empty, Failure, Loading } from '../parts/status';
import { when } from '../parts/time';

export interface Domain {
  domain: string;
  verified: boolean;
  verified_at?: number;
  txt_name?: string;
  txt_value?: string;
}

export const domainsPath = (me: Me) => `/1/tenants/${seg(me.tenant_id)}/domains`;

export function DomainList({ me }: { me: Me }) {
  const [loaded, again] = useLoad(
    () => get<{ domains: Domain[] }>(domainsPath(me)),
    [me.tenant_id],
  );
  const [removing, setRemoving] = useState<Domain | undefined>(undefined);
  const { run, error, done } = useAction(again);
  const claim = (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const domain = String(new FormData(form).get('domain') ?? '').trim();
    void run(async () => {
      await call('POST', domainsPath(me), { body: { domain } });
      form.reset();
      return `${domain} added: publish its TXT record below, then press “Verify”.`;
    });
  };
  const verify = (d: Domain) =>
    run(async () => {
      await call('POST', `${domainsPath(me)}/${seg(d.domain)}/verify`);
      return `${d.domain} is verified.`;
    });
  const remove = (d: Domain) =>
    run(async () => {
      setRemoving(undefined);
      await call('DELETE', `${domainsPath(me)}/${seg(d.domain)}`);
      return `${d.domain} removed.`;
    });
  return (
    <section aria-labelledby="domains-title">
      <h2 id="domains-title">E-mail domains</h2>
      <form onSubmit={claim} class="inline">
        <label for="new-domain">Domain</label>
        <input id="new-domain" name="domain" required placeholder="example.com" />
        <button type="submit">Add domain</button>
      </form>
      {done === undefined ? null : <Done>{done}</Done>}
      {error === undefined ? null : <Failure error={error} />}
      {loaded.state === 'loading' ? <Loading what="the domains" /> : null}
      {loaded.state === 'failed' ? <Failure error={loaded.error} /> : null}
      {loaded.state === 'ready' && loaded.value.domains.length === 0 ? (
        <Empty>No domains yet.</Empty>
      ) : null}
      {loaded.state === 'ready'
        ? loaded.value.domains.map((d) => (
            <article key={d.domain} class="card" aria-label={d.domain}>
              <h3>{d.domain}</h3>
              {d.verified ? (
                <p class="ok">Verified {when(d.verified_at)}</p>
              ) : (
                <>
                  <p>Not verified yet. Publish this DNS record, then verify:</p>
                  <dl>
                    <dt>TXT name</dt>
                    <dd>
                      <code>{d.txt_name}</code>
                    </dd>
                    <dt>TXT value</dt>
                    <dd>
                      <code>{d.txt_value}</code>
                    </dd>
                  </dl>
                  <button type="button" onClick={() => void verify(d)}>
                    Verify<span class="visually-hidden"> {d.domain}</span>
                  </button>
                </>
              )}{' '}
              <button type="button" class="danger" onClick={() => setRemoving(d)}>
                Remove<span class="visually-hidden"> {d.domain}</span>
              </button>
            </article>
          ))
        : null}
      {removing === undefined ? null : (
        <Confirm
          title={`Remove ${removing.domain}?`}
          body="Your identity provider can no longer vouch for addresses in it."
          action="Remove domain"
          onConfirm={() => void remove(removing)}
          onCancel={() => setRemoving(undefined)}
        />
      )}
    </section>
  );
}
