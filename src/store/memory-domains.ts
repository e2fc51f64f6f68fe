/** The in-memory store's tenant domains (see `memory-state.ts`, `domains.ts`). */
import { MAX_TENANT_DOMAINS, type TenantDomain, type DomainStore } from './domains.js';
import { ensureOpen, type MemoryState } from './memory-state.js';
import { compareIds, domainTaken, tooManyDomains } from './normalise.js';

const copy = (record: TenantDomain): TenantDomain => ({ ...record });

export function memoryDomains(state: MemoryState): DomainStore {
  const open = () => ensureOpen(state);
  return {
    addTenantDomain: async (input) => {
      open();
      return addTenantDomain(state, input);
    },
    listTenantDomains: async (tenantId) => {
      open();
      const records = [...(state.domains.get(tenantId)?.values() ?? [])];
      return records.sort((a, b) => compareIds(a.domain, b.domain)).map(copy);
    },
    verifyTenantDomain: async (tenantId, domain, at) => {
      open();
      const record = state.domains.get(tenantId)?.get(domain);
      if (record === undefined) return null;
      const holder = state.verifiedDomains.get(domain);
      if (holder !== undefined && holder !== tenantId) throw domainTaken();
      record.verifiedAt ??= at;
      state.verifiedDomains.set(domain, tenantId);
      return copy(record);
    },
    removeTenantDomain: async (tenantId, domain) => {
      open();
      const removed = state.domains.get(tenantId)?.delete(domain) ?? false;
      if (removed && state.verifiedDomains.get(domain) === tenantId)
        state.verifiedDomains.delete(domain);
      return removed;
    },
    verifiedDomainHolder: async (domain) => {
      open();
      return state.verifiedDomains.get(domain) ?? null;
    },
  };
}

function addTenantDomain(state: MemoryState, input: TenantDomain): TenantDomain | null {
  if (state.tenants.get(input.tenantId)?.type !== 'orgtenant') return null;
  const held = state.domains.get(input.tenantId) ?? new Map<string, TenantDomain>();
  const existing = held.get(input.domain);
  if (existing !== undefined) return copy(existing);
  const holder = state.verifiedDomains.get(input.domain);
  if (holder !== undefined && holder !== input.tenantId) throw domainTaken();
  if (held.size >= MAX_TENANT_DOMAINS) throw tooManyDomains(MAX_TENANT_DOMAINS);
  const record = copy(input);
  if (record.verifiedAt === undefined) delete record.verifiedAt;
  else state.verifiedDomains.set(record.domain, record.tenantId);
  held.set(record.domain, record);
  state.domains.set(input.tenantId, held);
  return copy(record);
}

/** Removes every domain of the tenant and its verifications (the tenant goes). */
export function removeTenantDomains(state: MemoryState, tenantId: string): void {
  for (const domain of state.domains.get(tenantId)?.keys() ?? []) {
    if (state.verifiedDomains.get(domain) === tenantId) state.verifiedDomains.delete(domain);
  }
  state.domains.delete(tenantId);
}
