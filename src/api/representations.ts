/** The JSON shapes of the identity API (docs/identity-api.md), built from store records in one place. */
import type { TenantRecord } from '../store/types.js';

/** Tenant summary: `{tenant_id, type, name}`. */
export function tenantSummary(t: TenantRecord) {
  return { tenant_id: t.tenantId, type: t.type, name: t.name };
}

/** The full tenant record. */
export function tenantRecord(t: TenantRecord) {
  return {
    ...tenantSummary(t),
    created_at: t.createdAt,
    modified_at: t.modifiedAt,
    cloud_region: t.cloudRegion,
    created_by: t.createdBy,
  };
}
