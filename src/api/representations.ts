/**
 * The JSON shapes of the identity API (docs/identity-api.md), built from
 * store records in one place, each typed by its answer's schema
 * (`schemas/`): what the document says is what the code can return. The
 * CLI prints the same.
 */
import type { z } from 'zod';
import { CHALLENGE_LABEL } from '../auth/federation/tenant-domains.js';
import type {
  TenantDomain as DomainRecord,
  TenantIdp as IdpRecord,
  TenantRecord,
} from '../store/types.js';
import type { TenantDomain, TenantDomainList } from './schemas/domains.js';
import type { TenantIdp } from './schemas/idps.js';
import type { Tenant, TenantList, TenantSummary } from './schemas/tenants.js';
import type { SignupResponse } from './schemas/users.js';
import type { PasswordResetRequested } from './schemas/accounts.js';

/** Tenant summary: `{tenant_id, type, name}`. */
export function tenantSummary(t: TenantRecord): z.infer<typeof TenantSummary> {
  return { tenant_id: t.tenantId, type: t.type, name: t.name };
}

/** A user's tenants. */
export function tenantList(tenants: readonly TenantRecord[]): z.infer<typeof TenantList> {
  return { tenants: tenants.map(tenantSummary) };
}

/** The full tenant record. */
export function tenantRecord(t: TenantRecord): z.infer<typeof Tenant> {
  return {
    ...tenantSummary(t),
    created_at: t.createdAt,
    modified_at: t.modifiedAt,
    cloud_region: t.cloudRegion,
    created_by: t.createdBy,
  };
}

/** A new user and their personal tenant. */
export function signedUp(user: {
  id: string;
  email: string;
  personalTenantId: string;
}): z.infer<typeof SignupResponse> {
  return { user_id: user.id, user_email: user.email, tenant_id: user.personalTenantId };
}

/** A tenant's identity provider: everything but the secret, of which only whether there is one. */
export function idpView(idp: IdpRecord): z.infer<typeof TenantIdp> {
  return {
    tenant_id: idp.tenantId,
    issuer: idp.issuer,
    client_id: idp.clientId,
    client_secret_set: idp.clientSecretSealed !== undefined,
    domains: [...idp.domains],
    role: idp.role,
    link_existing: idp.linkExisting,
    updated_at: idp.updatedAt,
  };
}

/** A tenant's e-mail domain: verified, or the TXT record that would verify it. */
export function domainView(record: DomainRecord): z.infer<typeof TenantDomain> {
  if (record.verifiedAt !== undefined)
    return { domain: record.domain, verified: true, verified_at: record.verifiedAt };
  return {
    domain: record.domain,
    verified: false,
    txt_name: `${CHALLENGE_LABEL}.${record.domain}`,
    txt_value: record.challenge,
  };
}

/** A tenant's e-mail domains. */
export function domainList(records: readonly DomainRecord[]): z.infer<typeof TenantDomainList> {
  return { domains: records.map(domainView) };
}

/** The one answer of `POST /1/password-resets`, whatever the address. */
export function passwordResetRequested(): z.infer<typeof PasswordResetRequested> {
  return {
    message: 'If an account has this address, a link to choose a new password is on its way to it.',
  };
}
