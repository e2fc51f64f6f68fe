/** The in-memory store's tenant identity providers (see `memory-state.ts`, `idps.ts`). */
import type { IdpStore, TenantIdp } from './idps.js';
import { ensureOpen, type MemoryState } from './memory-state.js';
import { idpClientKey, issuerInUse, normaliseDomains } from './normalise.js';

const copyIdp = (idp: TenantIdp): TenantIdp => ({ ...idp, domains: [...idp.domains] });

export function memoryIdps(state: MemoryState): IdpStore {
  const open = () => ensureOpen(state);
  return {
    setTenantIdp: async (idp) => setTenantIdp(state, idp),
    getTenantIdp: async (tenantId) => {
      open();
      const idp = state.idps.get(tenantId);
      return idp === undefined ? null : copyIdp(idp);
    },
    removeTenantIdp: async (tenantId) => {
      open();
      return removeTenantIdp(state, tenantId);
    },
    tenantIdByClient: async (issuer, clientId) => {
      open();
      return state.tenantsByClient.get(idpClientKey(issuer, clientId)) ?? null;
    },
  };
}

function setTenantIdp(state: MemoryState, input: TenantIdp): boolean {
  ensureOpen(state);
  if (state.tenants.get(input.tenantId)?.type !== 'orgtenant') return false;
  const pair = idpClientKey(input.issuer, input.clientId);
  const holder = state.tenantsByClient.get(pair);
  if (holder !== undefined && holder !== input.tenantId) throw issuerInUse();
  const idp = copyIdp({ ...input, domains: normaliseDomains(input.domains) });
  if (idp.clientSecretSealed === undefined) delete idp.clientSecretSealed;
  const previous = state.idps.get(idp.tenantId);
  if (previous !== undefined)
    state.tenantsByClient.delete(idpClientKey(previous.issuer, previous.clientId));
  state.idps.set(idp.tenantId, idp);
  state.tenantsByClient.set(pair, idp.tenantId);
  return true;
}

/** Removes the tenant's record and its issuer + client id (also when the tenant goes). */
export function removeTenantIdp(state: MemoryState, tenantId: string): boolean {
  const idp = state.idps.get(tenantId);
  if (idp === undefined) return false;
  state.idps.delete(tenantId);
  state.tenantsByClient.delete(idpClientKey(idp.issuer, idp.clientId));
  return true;
}
