/**
 * The session guard and memberships (issue 12, class 5; issue 30), with the
 * memory store as the real backend: a token is alive only while the
 * membership it was issued under lasts — a membership added back is another
 * one, whose generation no earlier token carries — verdicts are cached and
 * kept exact by the store's membership events, in whatever order they
 * arrive, and watchers hear an event only once the guard's verdicts reflect
 * it.
 */
import { describe, expect, it } from 'vitest';
import { createSessionGuard } from '../../src/auth/revocation/sessions.js';
import type { AccessTokenClaims } from '../../src/auth/tokens/tokens.js';
import { createMemoryStore } from '../../src/store/index.js';
import type { SessionEvent, SessionEventListener, Store } from '../../src/store/types.js';
import { codeThrownBy } from '../support/expect-error.js';
import { createStoredUser } from '../support/store-users.js';

const NOW = Math.floor(Date.now() / 1000);

/**
 * A memory store that counts membership reads, and whose events reach the
 * guard only when `deliver` says (held ones are released by the test: the
 * collaborator whose timing is under test).
 */
function countingStore() {
  const inner = createMemoryStore();
  const reads = { members: 0 };
  const held: SessionEvent[] = [];
  let listener: SessionEventListener | undefined;
  const control = { hold: false };
  const store: Store = {
    ...inner,
    memberships: {
      ...inner.memberships,
      readMembership(tenantId, userId) {
        reads.members++;
        return inner.memberships.readMembership(tenantId, userId);
      },
    },
    revocations: {
      ...inner.revocations,
      watchSessions(l) {
        listener = l;
        return inner.revocations.watchSessions({
          onEvent: (e) => (control.hold ? held.push(e) : l.onEvent(e)),
          onLive: (v) => l.onLive(v),
        });
      },
    },
  };
  return {
    store,
    reads,
    control,
    held,
    /** Gives the guard an event as if the store had sent it now. */
    tell(event: SessionEvent) {
      listener?.onEvent(event);
    },
  };
}

/** A user who is a member of `acme`, and a token of theirs for it. */
async function memberWithToken(store: Store): Promise<AccessTokenClaims> {
  const user = await createStoredUser(store, {
    id: 'u-1',
    email: 'u1@example.com',
    tenantId: 'p-1',
    now: NOW,
  });
  await store.tenants.upsertTenant(
    {
      tenantId: 'acme',
      type: 'orgtenant',
      name: 'Acme',
      cloudRegion: 'local',
      createdBy: 'u1@example.com',
    },
    NOW,
  );
  await store.memberships.addMember('acme', user.id);
  return tokenUnder(store, user.id, 'acme', 'jti-acme');
}

/** A token for the user's current membership of the tenant, as `grantToken` would issue it. */
async function tokenUnder(
  store: Store,
  userId: string,
  tenantId: string,
  jti: string,
): Promise<AccessTokenClaims> {
  const membership = await store.memberships.membershipForToken(tenantId, userId);
  if (membership === null) throw new Error(`${userId} is not a member of ${tenantId}`);
  return {
    iss: 'i',
    aud: 'a',
    sub: userId,
    tenant_id: tenantId,
    tenant_type: 'orgtenant',
    email: 'u1@example.com',
    sv: 0,
    mg: membership.generation,
    jti,
    iat: NOW,
    exp: NOW + 600,
  };
}

describe('session guard and memberships', () => {
  it('refuses a token for a tenant its user was removed from, at once, and only for that tenant', async () => {
    const { store } = countingStore();
    const guard = createSessionGuard(store, { clockSkewSeconds: 30 });
    const acme = await memberWithToken(store);
    const personal = await tokenUnder(store, acme.sub, 'p-1', 'jti-personal');
    await guard.assertAlive(acme);
    await guard.assertAlive(personal);
    expect(guard.aliveFromCache(acme)).toBe(true);

    expect(await store.memberships.removeMember('acme', acme.sub)).toBe(true);

    expect(codeThrownBy(() => guard.aliveFromCache(acme))).toBe('invalid_token');
    await expect(guard.assertAlive(acme)).rejects.toMatchObject({ code: 'invalid_token' });
    expect(guard.aliveFromCache(personal)).toBe(true);
  });

  it('a membership added back does not bring the old tokens back; its own are alive, all from the cache', async () => {
    const { store, reads } = countingStore();
    const guard = createSessionGuard(store, { clockSkewSeconds: 30 });
    const old = await memberWithToken(store);
    await guard.assertAlive(old);
    await store.memberships.removeMember('acme', old.sub);
    await expect(guard.assertAlive(old)).rejects.toMatchObject({ code: 'invalid_token' });
    const before = reads.members;

    await store.memberships.addMember('acme', old.sub);
    const renewed = await tokenUnder(store, old.sub, 'acme', 'jti-renewed');
    expect(renewed.mg).toBeGreaterThan(old.mg);
    for (let i = 0; i < 10; i++) {
      await expect(guard.assertAlive(old)).rejects.toMatchObject({
        code: 'invalid_token',
        message: 'The membership the token was issued under has ended.',
      });
      await guard.assertAlive(renewed);
    }
    expect(codeThrownBy(() => guard.aliveFromCache(old))).toBe('invalid_token');
    expect(guard.aliveFromCache(renewed)).toBe(true);
    // The events said it all: no store read for either verdict.
    expect(reads.members).toBe(before);
  });

  it('a token of a membership not heard of yet is asked of the store once: alive, and cached', async () => {
    const s = countingStore();
    const guard = createSessionGuard(s.store, { clockSkewSeconds: 30 });
    const old = await memberWithToken(s.store);
    await guard.assertAlive(old);
    // Another instance removes and adds the user back; its events are still on their way here.
    s.control.hold = true;
    await s.store.memberships.removeMember('acme', old.sub);
    await s.store.memberships.addMember('acme', old.sub);
    const renewed = await tokenUnder(s.store, old.sub, 'acme', 'jti-renewed');
    const before = s.reads.members;

    expect(guard.aliveFromCache(renewed)).toBe(false); // the cache cannot tell: no guess
    await guard.assertAlive(renewed);
    await guard.assertAlive(renewed);
    expect(s.reads.members).toBe(before + 1);
    // The store's answer is newer than what the cache held: the old token is refused at once.
    expect(codeThrownBy(() => guard.aliveFromCache(old))).toBe('invalid_token');

    // The late events, older than what the cache now knows, change nothing.
    s.control.hold = false;
    for (const event of s.held.splice(0)) s.tell(event);
    expect(guard.aliveFromCache(renewed)).toBe(true);
    expect(codeThrownBy(() => guard.aliveFromCache(old))).toBe('invalid_token');
    expect(s.reads.members).toBe(before + 1);
  });

  it('events out of order never bring an ended membership back, nor end a current one', async () => {
    const s = countingStore();
    const guard = createSessionGuard(s.store, { clockSkewSeconds: 30 });
    const first = await memberWithToken(s.store);
    await guard.assertAlive(first);
    const key = { userId: first.sub, tenantId: 'acme' };
    s.control.hold = true;
    await s.store.memberships.removeMember('acme', first.sub);
    await s.store.memberships.addMember('acme', first.sub);
    const [removed, added] = s.held.splice(0) as [SessionEvent, SessionEvent];
    expect(removed).toEqual({ kind: 'membership-removed', ...key, generation: first.mg + 1 });
    expect(added).toEqual({ kind: 'membership-added', ...key, generation: first.mg + 2 });
    const second = await tokenUnder(s.store, first.sub, 'acme', 'jti-second');

    s.tell(removed);
    expect(codeThrownBy(() => guard.aliveFromCache(first))).toBe('invalid_token');
    // The first membership's own addition, told again late (an instance's own copy of its event):
    s.tell({ kind: 'membership-added', ...key, generation: first.mg });
    expect(codeThrownBy(() => guard.aliveFromCache(first))).toBe('invalid_token');

    s.tell(added);
    const before = s.reads.members;
    await guard.assertAlive(second);
    // The removal told again after the addition that followed it (an instance's own copy, late):
    s.tell(removed);
    expect(guard.aliveFromCache(second)).toBe(true);
    expect(codeThrownBy(() => guard.aliveFromCache(first))).toBe('invalid_token');
    // Every membership verdict came from the events.
    expect(s.reads.members).toBe(before);
  });

  it('an event that does not say the generation makes the pair be read again', async () => {
    const s = countingStore();
    const guard = createSessionGuard(s.store, { clockSkewSeconds: 30 });
    const token = await memberWithToken(s.store);
    await guard.assertAlive(token);
    const before = s.reads.members;
    // What a lease confirmation or an instance of an earlier version sends.
    s.tell({ kind: 'membership-removed', userId: token.sub, tenantId: 'acme' });
    expect(guard.aliveFromCache(token)).toBe(false);
    // The store says the membership lasts (this removal was not made): alive, and cached again.
    await guard.assertAlive(token);
    expect(guard.aliveFromCache(token)).toBe(true);
    expect(s.reads.members).toBe(before + 1);
  });

  it('a membership read that started before a removal does not overwrite what the removal said', async () => {
    const { store } = countingStore();
    const guard = createSessionGuard(store, { clockSkewSeconds: 30 });
    const acme = await memberWithToken(store);
    const first = guard.assertAlive(acme);
    await store.memberships.removeMember('acme', acme.sub);
    await first.catch(() => undefined);
    await expect(guard.assertAlive(acme)).rejects.toMatchObject({ code: 'invalid_token' });
  });

  it('tells its watchers of an event once its verdicts reflect it', async () => {
    const { store } = countingStore();
    const guard = createSessionGuard(store, { clockSkewSeconds: 30 });
    const acme = await memberWithToken(store);
    await guard.assertAlive(acme);
    const heard: { event: SessionEvent; verdict: string | undefined }[] = [];
    const stop = guard.watch({
      onEvent: (event) =>
        heard.push({ event, verdict: codeThrownBy(() => guard.aliveFromCache(acme)) }),
      onLive: () => {},
    });
    await store.memberships.removeMember('acme', acme.sub);
    stop();
    await store.memberships.addMember('acme', acme.sub);
    expect(heard).toEqual([
      {
        event: {
          kind: 'membership-removed',
          userId: acme.sub,
          tenantId: 'acme',
          generation: acme.mg + 1,
        },
        verdict: 'invalid_token',
      },
    ]);
  });
});
