/**
 * A tenant's own identity provider (issue 34): the record an operator or the
 * tenant's admins set, and the store methods that keep it. The idps slice of the store
 * (`Store.idps`); implemented by `memory-idps.ts` and `redis-idps.ts`.
 */

/** Who may yield sign-ins for one org tenant: its OIDC provider. */
export interface TenantIdp {
  tenantId: string;
  /**
   * The provider's issuer exactly as configured (an `https://` URL). Compared
   * exactly, never normalised: an `iss` differing in a trailing slash or a
   * letter's case is another issuer.
   */
  issuer: string;
  /** This gateway's client id at the provider (an ID token's expected `aud`). */
  clientId: string;
  /**
   * The client secret, sealed (`auth/federation/sealed-secrets.ts`: AES-256-GCM, base64url
   * `iv.ct.tag`, the tenant id as additional data), or undefined when none was
   * set. Never plaintext at rest.
   */
  clientSecretSealed?: string;
  /** Allowed e-mail domains, lower-case, sorted, without duplicates. */
  domains: string[];
  /** The role a user gets when first signed in through the provider. */
  role: 'admin' | 'member';
  /** Whether a local user with the same verified e-mail may be linked. */
  linkExisting: boolean;
  /** Unix seconds of the last set. */
  updatedAt: number;
}

/**
 * The store's IdP records. At most one per org tenant; one issuer may serve
 * several tenants, but an issuer and client id (the pair) belong to at most
 * one (issue 42). The exchange never goes from a token to a tenant: the
 * request names the tenant, whose record alone is used. A tenant's removal
 * (`removeOrgTenant`) removes its record and its pair in the same write.
 */
export interface IdpStore {
  /**
   * Creates or replaces the tenant's record (and moves the issuer + client id
   * index when either changed), atomically. The domains are stored lower-cased,
   * sorted and without duplicates; the rest as given (the caller validates
   * and seals).
   * @returns false when there is no org tenant `idp.tenantId` (nothing written).
   * @throws GatewayError `issuer_in_use` (409) when another tenant's record
   * has this issuer and client id (nothing written).
   */
  setTenantIdp(idp: TenantIdp): Promise<boolean>;
  /** The tenant's record; null when it has none. */
  getTenantIdp(tenantId: string): Promise<TenantIdp | null>;
  /**
   * Removes the tenant's record and its issuer + client id, atomically.
   * @returns whether the tenant had a record.
   */
  removeTenantIdp(tenantId: string): Promise<boolean>;
  /** The tenant whose record has exactly this issuer and client id; null when none has. */
  tenantIdByClient(issuer: string, clientId: string): Promise<string | null>;
}
