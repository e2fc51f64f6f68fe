/** The in-memory store's tenants (see `memory-state.ts`). */
import { removeTenantClients } from './memory-clients.js';
import { removeTenantDomains } from './memory-domains.js';
import { removeTenantIdp } from './memory-idps.js';
import {
  ensureOpen,
  nextGeneration,
  pair,
  publish,
  removeFromSet,
  type MemoryState,
} from './memory-state.js';
import { compareIds, tenantTypeFixed } from './normalise.js';
import type { TenantStore } from './tenants.js';
import type { TenantInput, TenantRecord } from './types.js';

export function memoryTenants(state: MemoryState): TenantStore {
  return {
    upsertTenant: async (input, now) => upsertTenant(state, input, now),
    getTenant: async (tenantId) => {
      ensureOpen(state);
      const tenant = state.tenants.get(tenantId);
      return tenant === undefined ? null : { ...tenant };
    },
    listTenants: async () => {
      ensureOpen(state);
      return [...state.tenants.values()]
        .map((tenant) => ({ ...tenant }))
        .sort((a, b) => compareIds(a.tenantId, b.tenantId));
    },
    removeOrgTenant: async (tenantId) => removeOrgTenant(state, tenantId),
  };
}

function upsertTenant(state: MemoryState, input: TenantInput, now: number): TenantRecord {
  ensureOpen(state);
  const fields = {
    type: input.type,
    name: input.name,
    cloudRegion: input.cloudRegion,
    createdBy: input.createdBy,
  };
  const existing = state.tenants.get(input.tenantId);
  if (existing === undefined) {
    const created: TenantRecord = {
      tenantId: input.tenantId,
      ...fields,
      createdAt: now,
      modifiedAt: now,
    };
    state.tenants.set(created.tenantId, created);
    return { ...created };
  }
  if (existing.type !== fields.type) throw tenantTypeFixed();
  const changed = (Object.keys(fields) as (keyof typeof fields)[]).some(
    (key) => existing[key] !== fields[key],
  );
  if (changed) {
    Object.assign(existing, fields, { modifiedAt: now });
  }
  return { ...existing };
}

function removeOrgTenant(state: MemoryState, tenantId: string): string[] | null {
  ensureOpen(state);
  if (state.tenants.get(tenantId)?.type !== 'orgtenant') return null;
  const members = [...(state.membersOfTenant.get(tenantId) ?? [])].sort(compareIds);
  const ended = nextGeneration(state);
  for (const userId of members) {
    removeFromSet(state.tenantsOfUser, userId, tenantId);
    state.memberships.delete(pair(tenantId, userId));
    publish(state, { kind: 'membership-removed', userId, tenantId, generation: ended });
  }
  state.membersOfTenant.delete(tenantId);
  state.tenants.delete(tenantId);
  removeTenantClients(state, tenantId);
  removeTenantIdp(state, tenantId);
  removeTenantDomains(state, tenantId);
  return members;
}
