/**
 * The store's revoking writes, declared per slice: each operation whose
 * change must be confirmed on every instance before its caller answers (lease
 * mode, `auth/revocation/confirmed-revocations.ts`), with the session events that name
 * what it ended. The decorator wraps exactly these; a write that publishes a
 * session event and is in neither {@link REVOKING_WRITES} nor
 * {@link GRANTING_WRITES} fails `test/store/revoking-writes.test.ts`, so a
 * new revoking write cannot skip confirmation silently.
 *
 * A confirmation's membership events carry no generation: an instance
 * applies one by forgetting what it knew of the pair.
 */
import type { ClientRecord } from './clients.js';
import type { SessionEvent } from './revocations.js';
import type { Store, StoreSliceName, StoreSlices } from './types.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AsyncOperation = (...args: any[]) => Promise<unknown>;

/** The names of a slice's operations (its methods answering a promise). */
export type SliceOperation<S extends StoreSliceName> = {
  [K in keyof StoreSlices[S]]-?: StoreSlices[S][K] extends AsyncOperation ? K : never;
}[keyof StoreSlices[S]] &
  string;

/** How one revoking write is confirmed. */
export interface RevokingWrite<F extends AsyncOperation> {
  /** Read before the write, for what its answer does not name (a tenant's clients). */
  before?(store: Store, ...args: Parameters<F>): Promise<unknown>;
  /** What to confirm, from the write's answer (nothing when it changed nothing). */
  events(result: Awaited<ReturnType<F>>, args: Parameters<F>, before: unknown): SessionEvent[];
}

/** Per slice, its revoking writes. */
export type RevokingWrites = {
  readonly [S in StoreSliceName]?: {
    readonly [K in SliceOperation<S>]?: StoreSlices[S][K] extends AsyncOperation
      ? RevokingWrite<StoreSlices[S][K]>
      : never;
  };
};

const membershipEnded = (userId: string, tenantId: string): SessionEvent => ({
  kind: 'membership-removed',
  userId,
  tenantId,
});

const clientChanged = (clientId: string): SessionEvent => ({ kind: 'client-changed', clientId });

export const REVOKING_WRITES = {
  users: {
    setPasswordHash: {
      events: (sessionVersion, [userId]) =>
        sessionVersion === null ? [] : [{ kind: 'session-ended', userId, sessionVersion }],
    },
    removeUser: {
      events: (tenantIds, [userId]) =>
        (tenantIds ?? []).map((tenantId) => membershipEnded(userId, tenantId)),
    },
  },
  tenants: {
    removeOrgTenant: {
      // Its clients go with it: read before, as the removal does not name them.
      before: (store, tenantId) => store.clients.listClients(tenantId),
      events: (userIds, [tenantId], clients) =>
        userIds === null
          ? []
          : [
              ...userIds.map((userId) => membershipEnded(userId, tenantId)),
              ...(clients as ClientRecord[]).map(({ clientId }) => clientChanged(clientId)),
            ],
    },
  },
  memberships: {
    removeMember: {
      // Not truthiness: a change refused to keep an admin answers 'last-admin' and ended nothing.
      events: (removed, [tenantId, userId]) =>
        removed === true ? [membershipEnded(userId, tenantId)] : [],
    },
    setMemberRole: {
      // A new role is a new membership generation: the old tokens end as at a removal.
      events: (changed, [tenantId, userId]) =>
        changed === true ? [membershipEnded(userId, tenantId)] : [],
    },
  },
  clients: {
    rotateClientSecret: {
      events: (client, [clientId]) => (client === null ? [] : [clientChanged(clientId)]),
    },
    removeClient: {
      events: (keyIds, [clientId]) => (keyIds === null ? [] : [clientChanged(clientId)]),
    },
  },
  apiKeys: {
    removeApiKey: {
      events: (removed, [clientId]) => (removed ? [clientChanged(clientId)] : []),
    },
  },
  revocations: {
    revokeToken: { events: (_, [jti]) => [{ kind: 'token-revoked', jti }] },
  },
} as const satisfies RevokingWrites;

/**
 * Writes that publish a session event but end nothing, so need no
 * confirmation: a membership that begins (or takes its first generation) is
 * one an instance that has not heard of it yet refuses, the safe side.
 */
export const GRANTING_WRITES: {
  readonly [S in StoreSliceName]?: readonly SliceOperation<S>[];
} = {
  memberships: ['addMember', 'membershipForToken'],
};
