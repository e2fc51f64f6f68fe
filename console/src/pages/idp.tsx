/**
 * `/console/tenants/{t}/idp`: the tenant's e-mail domains (each with the DNS
 * TXT record to publish and its verification) and its identity provider.
 */
import type { Me } from '../me';
import { DomainList } from './idp-domains';
import { IdpSettings } from './idp-settings';

export function IdpPage({ me }: { me: Me }) {
  return (
    <>
      <h1>Identity provider of {me.tenant_name}</h1>
      <p class="muted">
        Your company's identity provider signs your people in. It may vouch only for e-mail domains
        this tenant has verified: add a domain, publish its DNS record, verify it, then set the
        provider.
      </p>
      <DomainList me={me} />
      <IdpSettings me={me} />
    </>
  );
}
