/**
 * The session guard's cache, with the memory store as the real backend and
 * only its event delivery under the test's control (the collaborator whose
 * outage is being simulated).
 */
import { describe, expect, it } from 'vitest';
import { createSessionGuard } from '../../src/auth/revocation/sessions.js';
import type { AccessTokenClaims } from '../../src/auth/tokens/tokens.js';
import { createMemoryStore } from '../../src/store/index.js';
import type { SessionEventListener, Store } from '../../src/store/types.js';
import { codeThrownBy } from '../support/expect-error.js';
import { createStoredUser } from '../support/store-users.js';

/** A memory store whose event delivery the test switches on and off, counting reads. */
function instrumentedStore() {
  const inner = createMemoryStore();
  let listener: SessionEventListener | undefined;
  let delivering = true;
  const reads = { versions: 0, revocations: 0 };
  const store: Store = {
    ...inner,
    users: {
      ...inner.users,
      getSessionVersion(userId) {
        reads.versions++;
        return inner.users.getSessionVersion(userId);
      },
    },
    revocations: {
      ...inner.revocations,
      isTokenRevoked(jti) {
        reads.revocations++;
        return inner.revocations.isTokenRevoked(jti);
      },
      watchSessions(l) {
        listener = l;
        return inner.revocations.watchSessions({
          onEvent: (e) => delivering && l.onEvent(e),
          onLive: (v) => l.onLive(v),
        });
      },
    },
  };
  return {
    store,
    inner,
    reads,
    /** Delivery stops; the guard is told, as the Redis subscriber tells it on a disconnect. */
    cut() {
      delivering = false;
      listener?.onLive(false);
    },
    /** Delivery stops without the guard knowing: what must never be relied upon. */
    dropSilently() {
      delivering = false;
    },
    restore() {
      delivering = true;
      listener?.onLive(true);
    },
  };
}

async function userWithToken(store: Store, jti = 'jti-1'): Promise<AccessTokenClaims> {
  const now = Math.floor(Date.now() / 1000);
  const user = await createStoredUser(store, {
    id: `u-${jti}`,
    email: `${jti}@example.com`,
    tenantId: `t-${jti}`,
    now,
  });
  return {
    iss: 'i',
    aud: 'a',
    sub: user.id,
    tenant_id: `t-${jti}`,
    tenant_type: 'usertenant',
    email: user.email,
    sv: 0,
    mg: (await store.memberships.readMembership(`t-${jti}`, user.id)).membership?.generation ?? 0,
    jti,
    iat: now,
    exp: now + 600,
  };
}

/** A guard on an instrumented store, and a new user's token it has accepted (so cached). */
async function warmGuard() {
  const s = instrumentedStore();
  const guard = createSessionGuard(s.store, { clockSkewSeconds: 30 });
  const claims = await userWithToken(s.store);
  await guard.assertAlive(claims);
  return { s, guard, claims };
}

describe('session guard cache', () => {
  it('reads the store once per user and token, then answers from memory', async () => {
    const s = instrumentedStore();
    const guard = createSessionGuard(s.store, { clockSkewSeconds: 30 });
    const claims = await userWithToken(s.store);
    for (let i = 0; i < 100; i++) await guard.assertAlive(claims);
    expect(s.reads).toEqual({ versions: 1, revocations: 1 });
    expect(guard.stats()).toMatchObject({ live: true, hits: 99, misses: 1 });
  });

  it('a password change and a revocation published by the store are honoured at once', async () => {
    const s = instrumentedStore();
    const guard = createSessionGuard(s.store, { clockSkewSeconds: 30 });
    const claims = await userWithToken(s.store);
    const other = { ...claims, jti: 'jti-other' };
    await guard.assertAlive(claims);
    await guard.assertAlive(other);
    await s.store.revocations.revokeToken(claims.jti, claims.exp);
    await expect(guard.assertAlive(claims)).rejects.toMatchObject({ code: 'invalid_token' });
    await guard.assertAlive(other);
    await s.store.users.setPasswordHash(claims.sub, 'new-hash');
    await expect(guard.assertAlive(other)).rejects.toMatchObject({ code: 'invalid_token' });
  });

  it('while delivery is down the cache is not trusted: every check reads the store', async () => {
    const { s, guard, claims } = await warmGuard();
    s.cut();
    // A password change this guard never hears about:
    await s.inner.users.setPasswordHash(claims.sub, 'changed-while-deaf');
    await expect(guard.assertAlive(claims)).rejects.toMatchObject({ code: 'invalid_token' });
    const before = s.reads.versions;
    await expect(guard.assertAlive(claims)).rejects.toMatchObject({ code: 'invalid_token' });
    expect(s.reads.versions).toBe(before + 1);
    expect(guard.stats().live).toBe(false);
  });

  it('when delivery returns, what was cached before the gap is forgotten', async () => {
    const { s, guard, claims } = await warmGuard();
    s.cut();
    await s.inner.revocations.revokeToken(claims.jti, claims.exp);
    s.restore();
    await expect(guard.assertAlive(claims)).rejects.toMatchObject({ code: 'invalid_token' });
  });

  it('with the store unreachable and no live delivery, it fails closed with unavailable', async () => {
    const { s, guard, claims } = await warmGuard();
    s.cut();
    await s.inner.close();
    await expect(guard.assertAlive(claims)).rejects.toMatchObject({ code: 'unavailable' });
  });

  it('a token newer than the cached session version is checked against the store, not refused', async () => {
    const { s, guard, claims } = await warmGuard();
    // The event of this change is lost (another instance's change, not yet heard of):
    s.dropSilently();
    const version = await s.inner.users.setPasswordHash(claims.sub, 'newer');
    const fresh = { ...claims, jti: 'jti-fresh', sv: version as number };
    await guard.assertAlive(fresh);
  });

  it('a store read that started before an event does not overwrite what the event said', async () => {
    const s = instrumentedStore();
    const guard = createSessionGuard(s.store, { clockSkewSeconds: 30 });
    const claims = await userWithToken(s.store);
    // Start a check (cache miss: store read in flight), and revoke before it resolves.
    const first = guard.assertAlive(claims);
    await s.store.revocations.revokeToken(claims.jti, claims.exp);
    await first.catch(() => undefined);
    await expect(guard.assertAlive(claims)).rejects.toMatchObject({ code: 'invalid_token' });
  });

  it('logout through the guard is immediate on this instance and reaches the store', async () => {
    const { s, guard, claims } = await warmGuard();
    await guard.revoke(claims);
    await expect(guard.assertAlive(claims)).rejects.toMatchObject({ code: 'invalid_token' });
    expect(await s.inner.revocations.isTokenRevoked(claims.jti)).toBe(true);
  });

  describe('the verdict it remembers between events (the proxy path repeats no lookup)', () => {
    /** A guard that has judged a token alive from its cache twice: the second time from memory. */
    async function remembered() {
      const { s, guard, claims } = await warmGuard();
      expect(guard.aliveFromCache(claims)).toBe(true);
      expect(guard.aliveFromCache(claims)).toBe(true);
      return { s, guard, claims };
    }

    it('ends with a revocation or a password change published by the store', async () => {
      const { s, guard, claims } = await remembered();
      const other = { ...claims, jti: 'jti-other' };
      await guard.assertAlive(other);
      expect(guard.aliveFromCache(other)).toBe(true);

      await s.store.revocations.revokeToken(claims.jti, claims.exp);
      expect(codeThrownBy(() => guard.aliveFromCache(claims))).toBe('invalid_token');
      expect(guard.aliveFromCache(other)).toBe(true);
      expect(guard.aliveFromCache(other)).toBe(true);

      await s.store.users.setPasswordHash(claims.sub, 'new-hash');
      expect(codeThrownBy(() => guard.aliveFromCache(other))).toBe('invalid_token');
      expect(s.reads).toEqual({ versions: 1, revocations: 2 });
    });

    it('is not trusted once delivery is lost', async () => {
      const { s, guard, claims } = await remembered();
      s.cut();
      expect(guard.aliveFromCache(claims)).toBe(false);
    });

    it('ends with a logout through this guard, even before any event arrives', async () => {
      const { s, guard, claims } = await remembered();
      s.dropSilently();
      await guard.revoke(claims);
      expect(codeThrownBy(() => guard.aliveFromCache(claims))).toBe('invalid_token');
    });
  });
});
