/**
 * A tenant's e-mail domains (issue 42): what a tenant claims, the DNS TXT
 * challenge that proves it, and whether it is proven. An identity provider
 * vouches only for a domain its tenant has verified (`auth/federation/tenant-domains.ts`),
 * and a verified domain belongs to one tenant. The domains slice of
 * the store (`Store.domains`); implemented by `memory-domains.ts` and
 * `redis-domains.ts`.
 */

/** One domain of one tenant. */
export interface TenantDomain {
  tenantId: string;
  /** Lower-case DNS name. */
  domain: string;
  /** The random value the tenant publishes in the challenge TXT record. */
  challenge: string;
  /** Unix seconds. */
  createdAt: number;
  /** Unix seconds of the verification; absent while unverified. */
  verifiedAt?: number;
}

/** The most domains one tenant may hold (verified or not). */
export const MAX_TENANT_DOMAINS = 100;

/**
 * The store's tenant domains. A verified domain is held by at most one
 * tenant: the check and the write are one atomic step in every backend. A
 * tenant's removal (`removeOrgTenant`) removes its domains in the same write.
 */
export interface DomainStore {
  /**
   * Adds the tenant's domain (verified when `verifiedAt` is set), or answers
   * the one it already has, unchanged.
   * @returns the stored record; null when there is no org tenant `tenantId`.
   * @throws GatewayError `domain_taken` (409) when another tenant has verified
   * the domain; `invalid_request` when the tenant already has
   * {@link MAX_TENANT_DOMAINS} (nothing written either way).
   */
  addTenantDomain(domain: TenantDomain): Promise<TenantDomain | null>;
  /** The tenant's domains, by name. */
  listTenantDomains(tenantId: string): Promise<TenantDomain[]>;
  /**
   * Marks the tenant's domain verified at `at` (kept when it already was).
   * @returns the record; null when the tenant has no such domain.
   * @throws GatewayError `domain_taken` (409) when another tenant has verified it.
   */
  verifyTenantDomain(tenantId: string, domain: string, at: number): Promise<TenantDomain | null>;
  /** Removes the tenant's domain (and its verification). @returns whether it had it. */
  removeTenantDomain(tenantId: string, domain: string): Promise<boolean>;
  /** The tenant that has verified this (lower-case) domain; null when none has. */
  verifiedDomainHolder(domain: string): Promise<string | null>;
}
