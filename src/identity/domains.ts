/**
 * A tenant's e-mail domains (issue 42), claimed, verified and removed once
 * for the identity API (`api/identity/domain-routes.ts`, a tenant admin) and
 * the CLI (`cli/domains.ts`, the operator): each operation checks its rules,
 * writes the store and records its audit event. A claim gets a DNS TXT
 * challenge, verified by looking the record up (`sso.dnsServers`); only the
 * operator may vouch for a domain without DNS (`verified`). A verified domain
 * belongs to one tenant (the store checks and writes that atomically). The
 * caller has found the org tenant it names, and checked that the actor may
 * manage it; the domain is checked (`auth/federation/tenant-domains.ts`, `checkDomain`).
 */
import { randomBytes } from 'node:crypto';
import type { AuditRecorder } from '../audit/recorder.js';
import type { TxtLookup } from '../auth/federation/dns-txt.js';
import { CHALLENGE_LABEL, noDomain } from '../auth/federation/tenant-domains.js';
import { GatewayError } from '../errors.js';
import { domainTaken } from '../store/normalise.js';
import type { Store, TenantDomain } from '../store/types.js';
import { requireOperator, type Actor } from './actor.js';

export interface DomainDeps {
  store: Store;
  audit: AuditRecorder;
  /** TXT records, through `sso.dnsServers`. */
  lookupTxt: TxtLookup;
  now?: () => number;
}

/** What a claim did: the record, and whether it is new. */
export interface DomainClaim {
  record: TenantDomain;
  created: boolean;
}

const nowSeconds = (deps: Pick<DomainDeps, 'now'>) => deps.now?.() ?? Math.floor(Date.now() / 1000);

/**
 * Adds the domain with a fresh challenge, or answers the one the tenant has;
 * records `domain_added` when it is new. With `verified` (the operator's
 * word, no DNS) it is verified at once, and `domain_verified` recorded when
 * it was not already.
 * @throws GatewayError `forbidden` (`verified` by anyone but the operator),
 * `not_found` (no org tenant), `domain_taken` (409), `invalid_request` (one
 * domain too many)
 */
export async function addDomain(
  deps: Omit<DomainDeps, 'lookupTxt'>,
  actor: Actor,
  tenantId: string,
  domain: string,
  { verified = false }: { verified?: boolean } = {},
): Promise<DomainClaim> {
  if (verified) requireOperator(actor, 'vouch for a domain without DNS');
  const wasVerified =
    verified && (await deps.store.domains.verifiedDomainHolder(domain)) === tenantId;
  const now = nowSeconds(deps);
  const challenge = randomBytes(24).toString('base64url');
  const input: TenantDomain = { tenantId, domain, challenge, createdAt: now };
  let record = await deps.store.domains.addTenantDomain(
    verified ? { ...input, verifiedAt: now } : input,
  );
  if (record === null) throw new GatewayError('not_found', 'There is no org tenant with this id.');
  const created = record.challenge === challenge;
  // The tenant had it unverified: the operator verifies it.
  if (verified && record.verifiedAt === undefined)
    record = await markVerified(deps.store, tenantId, domain, now);
  const about = { tenant_id: tenantId, domain };
  if (created) await deps.audit.record('domain_added', actor.audit, about);
  if (verified && !wasVerified) await deps.audit.record('domain_verified', actor.audit, about);
  return { record, created };
}

/**
 * Verifies the tenant's domain by its TXT challenge (kept verified when it
 * already is: no DNS asked); records `domain_verified`.
 * @throws GatewayError `not_found` (no such domain of the tenant),
 * `domain_not_verified` (400: the record is not published), `domain_taken`
 * (409), `unavailable` (503: the DNS could not be asked)
 */
export async function verifyDomain(
  deps: DomainDeps,
  actor: Actor,
  tenantId: string,
  domain: string,
): Promise<TenantDomain> {
  const record = await verifiedByDns(deps, tenantId, domain);
  await deps.audit.record('domain_verified', actor.audit, { tenant_id: tenantId, domain });
  return record;
}

async function verifiedByDns(
  deps: DomainDeps,
  tenantId: string,
  domain: string,
): Promise<TenantDomain> {
  const record = (await deps.store.domains.listTenantDomains(tenantId)).find(
    (d) => d.domain === domain,
  );
  if (record === undefined) throw noDomain();
  if (record.verifiedAt !== undefined) return record;
  // Another tenant's already: no DNS asked (the store checks again as it writes).
  const holder = await deps.store.domains.verifiedDomainHolder(domain);
  if (holder !== null && holder !== tenantId) throw domainTaken();
  const name = `${CHALLENGE_LABEL}.${domain}`;
  if (!(await deps.lookupTxt(name)).includes(record.challenge)) {
    throw new GatewayError(
      'domain_not_verified',
      `No TXT record of ${name} holds the challenge: publish it (txt_value) and verify again once DNS has it.`,
      { detail: domain },
    );
  }
  return markVerified(deps.store, tenantId, domain, nowSeconds(deps));
}

/**
 * Removes the tenant's domain and its verification; records `domain_removed`.
 * An IdP record naming it stays as it is, but unusable until it is verified again.
 * @throws GatewayError `not_found` (no such domain of the tenant)
 */
export async function removeDomain(
  deps: Pick<DomainDeps, 'store' | 'audit'>,
  actor: Actor,
  tenantId: string,
  domain: string,
): Promise<void> {
  if (!(await deps.store.domains.removeTenantDomain(tenantId, domain))) throw noDomain();
  await deps.audit.record('domain_removed', actor.audit, { tenant_id: tenantId, domain });
}

async function markVerified(
  store: Store,
  tenantId: string,
  domain: string,
  now: number,
): Promise<TenantDomain> {
  const verified = await store.domains.verifyTenantDomain(tenantId, domain, now);
  if (verified === null) throw noDomain();
  return verified;
}
