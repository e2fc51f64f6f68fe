/**
 * The tenants slice of the store (`Store.tenants`). Implemented by
 * `memory-tenants.ts` and `redis-tenants.ts`.
 */

export type TenantType = 'usertenant' | 'orgtenant';

export interface TenantRecord {
  tenantId: string;
  type: TenantType;
  name: string;
  /** Unix seconds. */
  createdAt: number;
  /** Unix seconds. */
  modifiedAt: number;
  cloudRegion: string;
  /** E-mail of the creator. */
  createdBy: string;
}

/** Fields of a tenant an upsert may set; timestamps are kept by the store. */
export interface TenantInput {
  tenantId: string;
  /** Fixed once the tenant exists: tokens carry it (`tenant_type`) and routes admit by it. */
  type: TenantType;
  name: string;
  cloudRegion: string;
  createdBy: string;
}

export interface TenantStore {
  /**
   * Creates the tenant, or updates name/region/creator of an existing one
   * (keeping `createdAt`, setting `modifiedAt`). Unchanged input is a no-op.
   * @throws GatewayError `invalid_request` when the tenant exists with
   * another type (its members' tokens carry the type), writing nothing.
   */
  upsertTenant(tenant: TenantInput, now: number): Promise<TenantRecord>;
  getTenant(tenantId: string): Promise<TenantRecord | null>;
  listTenants(): Promise<TenantRecord[]>;
  /**
   * Removes an org tenant and its memberships, atomically, publishing
   * `membership-removed` for each member (with a new generation: a tenant
   * created again under the id does not bring them back): their tokens for the tenant are
   * refused on every instance before this resolves (their other tenants are
   * untouched). Its machine clients and their API keys, and its identity
   * provider's record and issuer (`IdpStore`) and its domains (`DomainStore`), go in the same write.
   * A personal tenant goes only with its user (`removeUser`).
   * @returns the ids of the members it had, sorted; null when there is no
   * org tenant with this id.
   */
  removeOrgTenant(tenantId: string): Promise<string[] | null>;
}
