/**
 * A tenant's identity provider, set and removed (issue 34), once for the
 * identity API (`api/identity/idp-routes.ts`, a tenant admin) and the CLI
 * (`cli/idps.ts`, the operator), who obey the same rules: the issuer on a
 * public address unless `sso.allowPrivateIssuers` (issue 42, finding 7), every
 * domain one the tenant has verified, the client secret sealed. Each
 * operation writes the store and records its audit event. The caller has
 * found the org tenant it names, and checked that the actor may manage it.
 *
 * The client secret is write-only: sealed before it reaches the store
 * (`auth/federation/sealed-secrets.ts`), never in a view, an audit event or a log line. A
 * set that leaves it out keeps the stored one while the issuer and client id
 * stay the same (a secret belongs to one client at one IdP); `null` removes it.
 */
import type { AuditRecorder } from '../audit/recorder.js';
import type { SecretSealer } from '../auth/federation/sealed-secrets.js';
import { requireVerifiedDomains } from '../auth/federation/tenant-domains.js';
import { checkIssuerAddress, type IdpSettings } from '../auth/federation/tenant-idps.js';
import { GatewayError } from '../errors.js';
import { normaliseDomains } from '../store/normalise.js';
import type { Store, TenantIdp } from '../store/types.js';
import type { Actor } from './actor.js';

export interface IdpDeps {
  store: Store;
  audit: AuditRecorder;
  /** `sso.secretsKeyFile`'s sealer; undefined when none is configured. */
  sealer: SecretSealer | undefined;
  /** `sso.allowPrivateIssuers`: an issuer on a non-public address is accepted. */
  allowPrivateIssuers: boolean;
  now?: () => number;
}

/** What a set did: the record stored, and whether it replaced one. */
export interface IdpSet {
  idp: TenantIdp;
  replaced: boolean;
}

/**
 * Stores the tenant's record from checked settings (`checkIdpSettings`),
 * sealing a new secret; records `idp_set`.
 * @throws GatewayError `invalid_request` for an issuer on a non-public address
 * ({@link checkIssuerAddress}) or a secret without `sso.secretsKeyFile`;
 * `domain_not_verified` (400) for a domain the tenant has not verified;
 * `not_found` when there is no org tenant `tenantId`; `issuer_in_use` (409)
 * when another tenant's IdP has the issuer and client id.
 */
export async function setIdp(
  deps: IdpDeps,
  actor: Actor,
  tenantId: string,
  settings: IdpSettings,
): Promise<IdpSet> {
  await checkIssuerAddress(settings.issuer, deps.allowPrivateIssuers);
  const stored = await deps.store.idps.getTenantIdp(tenantId);
  const sealed = sealedSecret(deps.sealer, tenantId, settings, stored);
  await requireVerifiedDomains(deps.store, tenantId, settings.domains);
  const idp: TenantIdp = {
    tenantId,
    issuer: settings.issuer,
    clientId: settings.client_id,
    ...(sealed === undefined ? {} : { clientSecretSealed: sealed }),
    // As the store keeps them: what the answer shows is what was stored.
    domains: normaliseDomains(settings.domains),
    role: settings.role,
    linkExisting: settings.link_existing,
    updatedAt: deps.now?.() ?? Math.floor(Date.now() / 1000),
  };
  if (!(await deps.store.idps.setTenantIdp(idp))) {
    throw new GatewayError('not_found', 'There is no org tenant with this id.');
  }
  await deps.audit.record('idp_set', actor.audit, {
    tenant_id: tenantId,
    issuer: idp.issuer,
    idp_client_id: idp.clientId,
  });
  return { idp, replaced: stored !== null };
}

/**
 * Removes the tenant's record; records `idp_removed`.
 * @returns the record removed
 * @throws GatewayError `not_found` ({@link noIdp}) when it has none
 */
export async function removeIdp(
  deps: Pick<IdpDeps, 'store' | 'audit'>,
  actor: Actor,
  tenantId: string,
): Promise<TenantIdp> {
  const idp = await deps.store.idps.getTenantIdp(tenantId);
  if (idp === null || !(await deps.store.idps.removeTenantIdp(tenantId))) throw noIdp();
  await deps.audit.record('idp_removed', actor.audit, { tenant_id: tenantId, issuer: idp.issuer });
  return idp;
}

export function noIdp(): GatewayError {
  return new GatewayError('not_found', 'The tenant has no identity provider.');
}

/** The sealed secret the record keeps: a new one sealed, the stored one kept, or none. */
function sealedSecret(
  sealer: SecretSealer | undefined,
  tenantId: string,
  settings: IdpSettings,
  stored: TenantIdp | null,
): string | undefined {
  const secret = settings.client_secret;
  if (secret === null) return undefined;
  if (secret !== undefined) {
    if (sealer === undefined) {
      throw new GatewayError(
        'invalid_request',
        'Invalid client_secret: this gateway keeps no IdP client secrets (sso.secretsKeyFile is not configured); set the IdP without one, or configure the key first.',
        { detail: 'client_secret' },
      );
    }
    return sealer.seal(secret, tenantId);
  }
  const sameClient = stored?.issuer === settings.issuer && stored.clientId === settings.client_id;
  return sameClient ? stored.clientSecretSealed : undefined;
}
