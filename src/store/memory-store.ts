/**
 * A store held in in-process Maps: the embedded default and the reference the
 * Redis store is tested against. Nothing is shared between processes, so it
 * suits a single instance only. It behaves like the Redis store in every
 * observable way (errors, sorting, expiry), including refusing calls with
 * `unavailable` once closed. Each concern is a file of its own
 * (`memory-*.ts`); this assembles them over one state (`memory-state.ts`).
 */
import { memoryAuditLogs } from './memory-audit.js';
import { memoryApiKeys } from './memory-api-keys.js';
import { memoryBrowserSessions } from './memory-browser-sessions.js';
import { memoryClients } from './memory-clients.js';
import { memoryDomains } from './memory-domains.js';
import { memoryInvitations } from './memory-invitations.js';
import { memoryIdps } from './memory-idps.js';
import { memorySso } from './memory-sso.js';
import { memoryMemberships } from './memory-memberships.js';
import { memoryRefreshFamilies } from './memory-refresh.js';
import { memoryRevocations } from './memory-revocations.js';
import { ensureOpen, newMemoryState } from './memory-state.js';
import { memoryTenants } from './memory-tenants.js';
import { memoryUsers } from './memory-users.js';
import { memoryLoginCounters } from './login-counters.js';
import type { Store } from './types.js';

export function createMemoryStore(): Store {
  const state = newMemoryState();
  return {
    users: memoryUsers(state),
    tenants: memoryTenants(state),
    memberships: memoryMemberships(state),
    clients: memoryClients(state),
    apiKeys: memoryApiKeys(state),
    refresh: memoryRefreshFamilies(state),
    idps: memoryIdps(state),
    sso: memorySso(state),
    domains: memoryDomains(state),
    invitations: memoryInvitations(state),
    revocations: memoryRevocations(state),
    browserSessions: memoryBrowserSessions(state),

    loginCounter: memoryLoginCounters(),

    auditLog: memoryAuditLogs(() => ensureOpen(state)),

    async ping(): Promise<void> {
      ensureOpen(state);
    },

    async close(): Promise<void> {
      state.closed = true;
      for (const listener of state.listeners) listener.onLive(false);
      state.listeners.clear();
    },
  };
}
