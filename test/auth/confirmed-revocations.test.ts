/**
 * The revoker's side of lease mode on the memory store, with the lease calls
 * as the collaborator under the test's control: which writes wait for
 * confirmation and with which events, how long the wait lasts for holders
 * that answer and for one that does not, and that a failed confirmation is an
 * error, never a silent 204.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { confirmRevocations } from '../../src/auth/revocation/confirmed-revocations.js';
import { GatewayError } from '../../src/errors.js';
import { createMemoryStore } from '../../src/store/index.js';
import type { RevocationLeases, SessionEvent } from '../../src/store/types.js';

const LEASE_MS = 1000;

/** Lease calls recording the confirmation requests; holders acknowledge after `ackAfterMs` (never: Infinity). */
function fakeLeases(ackAfterMs: number, leaseLeftMs = 700) {
  const requests: SessionEvent[][] = [];
  const fenced: string[] = [];
  let requestedAt = 0;
  const leases: RevocationLeases = {
    hold: async () => true,
    release: async () => {},
    async requestConfirmation(_id, events) {
      requests.push([...events]);
      requestedAt = Date.now();
    },
    acknowledge: async () => {},
    unacknowledged: async () => (Date.now() - requestedAt >= ackAfterMs ? 0 : 1),
    async fenceUnacknowledged(id) {
      fenced.push(id);
      return leaseLeftMs;
    },
  };
  return { leases, requests, fenced };
}

async function storeWith(leases: RevocationLeases) {
  const inner = createMemoryStore();
  const observed: { seconds: number; fenced: boolean }[] = [];
  const store = confirmRevocations(
    { ...inner, revocations: { ...inner.revocations, leases } },
    LEASE_MS,
    (seconds, fenced) => observed.push({ seconds, fenced }),
  );
  const user = await inner.users.createUser({
    id: 'u1',
    email: 'a@example.com',
    passwordHash: '$2b$04$abcdefghijklmnopqrstuu1234567890123456789012345678901',
    createdAt: 0,
    personalTenant: {
      tenantId: 'p1',
      type: 'usertenant',
      name: 'A',
      cloudRegion: 'r',
      createdBy: 'a@example.com',
    } as never,
  });
  await inner.tenants.upsertTenant(
    { tenantId: 'acme', type: 'orgtenant', name: 'Acme', cloudRegion: 'r', createdBy: 'x' },
    0,
  );
  await inner.memberships.addMember('acme', user.id);
  return { store, observed };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('confirmRevocations', () => {
  it('confirms each revoking write with the events it caused', async () => {
    const { leases, requests } = fakeLeases(0);
    const { store } = await storeWith(leases);
    await store.revocations.revokeToken('j1', Date.now() / 1000 + 60);
    expect(await store.users.setPasswordHash('u1', '$2b$04$x')).toBe(1);
    expect(await store.memberships.removeMember('acme', 'u1')).toBe(true);
    expect(await store.memberships.removeMember('acme', 'u1')).toBe(false); // nothing removed: nothing to confirm
    await store.memberships.addMember('acme', 'u1'); // not a revocation
    expect(await store.tenants.removeOrgTenant('acme')).toEqual(['u1']);
    expect(await store.users.removeUser('u1')).toEqual(['p1']);
    expect(requests).toEqual([
      [{ kind: 'token-revoked', jti: 'j1' }],
      [{ kind: 'session-ended', userId: 'u1', sessionVersion: 1 }],
      [{ kind: 'membership-removed', userId: 'u1', tenantId: 'acme' }],
      [{ kind: 'membership-removed', userId: 'u1', tenantId: 'acme' }],
      [{ kind: 'membership-removed', userId: 'u1', tenantId: 'p1' }],
    ]);
  });

  it("confirms a role change as the end of the member's old tokens; the same role again changes nothing", async () => {
    const { leases, requests } = fakeLeases(0);
    const { store } = await storeWith(leases);
    expect(await store.memberships.setMemberRole('acme', 'u1', 'admin')).toBe(true);
    expect(await store.memberships.setMemberRole('acme', 'u1', 'admin')).toBe(false);
    expect(await store.memberships.setMemberRole('acme', 'nobody', 'admin')).toBe(null);
    expect(requests).toEqual([[{ kind: 'membership-removed', userId: 'u1', tenantId: 'acme' }]]);
  });

  it('resolves once every holder has acknowledged, without fencing', async () => {
    const { leases, fenced } = fakeLeases(120);
    const { store, observed } = await storeWith(leases);
    let done = false;
    void store.revocations.revokeToken('j1', Date.now() / 1000 + 60).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(100);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(40); // polled at most 20 ms apart
    expect(done).toBe(true);
    expect(fenced).toEqual([]);
    expect(observed).toEqual([{ seconds: expect.any(Number), fenced: false }]);
  });

  it('a silent holder: fenced after half a lease, then its lease is waited out', async () => {
    const { leases, fenced } = fakeLeases(Infinity, 700);
    const { store, observed } = await storeWith(leases);
    let done = false;
    void store.revocations.revokeToken('j1', Date.now() / 1000 + 60).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(LEASE_MS / 2 - 1);
    expect(fenced).toEqual([]);
    await vi.advanceTimersByTimeAsync(21);
    expect(fenced).toHaveLength(1);
    // Fenced at 500 ms: the 700 ms its lease had left end at 1,200 ms.
    await vi.advanceTimersByTimeAsync(670);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(30);
    expect(done).toBe(true);
    expect(observed[0]?.fenced).toBe(true);
  });

  it('a confirmation the store cannot make is an error, not a quiet success', async () => {
    const { leases } = fakeLeases(0);
    const broken: RevocationLeases = {
      ...leases,
      requestConfirmation: () =>
        Promise.reject(new GatewayError('unavailable', 'The store is unreachable.')),
    };
    const { store } = await storeWith(broken);
    await expect(store.revocations.revokeToken('j1', Date.now() / 1000 + 60)).rejects.toMatchObject(
      {
        code: 'unavailable',
      },
    );
  });

  it('a store without leases is returned as it is', () => {
    const inner = createMemoryStore();
    expect(confirmRevocations(inner, LEASE_MS)).toBe(inner);
  });
});
