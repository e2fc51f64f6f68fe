/**
 * The session guard and memberships (issue 12, class 5), with the memory
 * store as the real backend: a token is alive only while its user is a
 * member of its tenant, both verdicts are cached and kept exact by the
 * store's membership events, and watchers hear an event only once the
 * guard's verdicts reflect it.
 */
import { describe, expect, it } from 'vitest';
import { createSessionGuard } from '../../src/auth/sessions.js';
import type { AccessTokenClaims } from '../../src/auth/tokens.js';
import { createMemoryStore } from '../../src/store/index.js';
import type { SessionEvent, Store } from '../../src/store/types.js';

const NOW = Math.floor(Date.now() / 1000);

/** A memory store that counts membership reads. */
function countingStore(): { store: Store; reads: { members: number } } {
  const inner = createMemoryStore();
  const reads = { members: 0 };
  const store: Store = {
    ...inner,
    isMember(tenantId, userId) {
      reads.members++;
      return inner.isMember(tenantId, userId);
    },
  };
  return { store, reads };
}

/** A user who is a member of `acme`, and a token of theirs for it. */
async function memberWithToken(store: Store): Promise<AccessTokenClaims> {
  const user = await store.createUser({
    id: 'u-1',
    email: 'u1@example.com',
    passwordHash: '$2b$04$abcdefghijklmnopqrstuuSGZYtOLo8u7mqKVN5b1D5XnQkWq6PVy',
    createdAt: NOW,
    personalTenant: {
      tenantId: 'p-1',
      type: 'usertenant',
      name: 'x',
      createdAt: NOW,
      modifiedAt: NOW,
      cloudRegion: 'local',
      createdBy: 'u1@example.com',
    },
  });
  await store.upsertTenant(
    {
      tenantId: 'acme',
      type: 'orgtenant',
      name: 'Acme',
      cloudRegion: 'local',
      createdBy: 'u1@example.com',
    },
    NOW,
  );
  await store.addMember('acme', user.id);
  return {
    iss: 'i',
    aud: 'a',
    sub: user.id,
    tenant_id: 'acme',
    tenant_type: 'orgtenant',
    email: user.email,
    sv: 0,
    jti: 'jti-acme',
    iat: NOW,
    exp: NOW + 600,
  };
}

function codeThrownBy(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return (err as { code?: string }).code ?? 'no code';
  }
  return undefined;
}

describe('session guard and memberships', () => {
  it('refuses a token for a tenant its user was removed from, at once, and only for that tenant', async () => {
    const { store } = countingStore();
    const guard = createSessionGuard(store, { clockSkewSeconds: 30 });
    const acme = await memberWithToken(store);
    const personal = { ...acme, jti: 'jti-personal', tenant_id: 'p-1' };
    await guard.assertAlive(acme);
    await guard.assertAlive(personal);
    expect(guard.aliveFromCache(acme)).toBe(true);

    expect(await store.removeMember('acme', acme.sub)).toBe(true);

    expect(codeThrownBy(() => guard.aliveFromCache(acme))).toBe('invalid_token');
    await expect(guard.assertAlive(acme)).rejects.toMatchObject({ code: 'invalid_token' });
    expect(guard.aliveFromCache(personal)).toBe(true);
  });

  it('caches the refusal too, and a membership added back lifts it at once', async () => {
    const { store, reads } = countingStore();
    const guard = createSessionGuard(store, { clockSkewSeconds: 30 });
    const acme = await memberWithToken(store);
    await store.removeMember('acme', acme.sub);
    const fresh = { ...acme, jti: 'jti-fresh' };
    await expect(guard.assertAlive(fresh)).rejects.toMatchObject({ code: 'invalid_token' });
    const before = reads.members;
    for (let i = 0; i < 10; i++) {
      await expect(guard.assertAlive(fresh)).rejects.toMatchObject({ code: 'invalid_token' });
    }
    expect(reads.members).toBe(before);

    await store.addMember('acme', acme.sub);
    await guard.assertAlive(fresh);
    expect(guard.aliveFromCache(fresh)).toBe(true);
    expect(reads.members).toBe(before);
  });

  it('a membership read that started before a removal does not overwrite what the removal said', async () => {
    const { store } = countingStore();
    const guard = createSessionGuard(store, { clockSkewSeconds: 30 });
    const acme = await memberWithToken(store);
    const first = guard.assertAlive(acme);
    await store.removeMember('acme', acme.sub);
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
    await store.removeMember('acme', acme.sub);
    stop();
    await store.addMember('acme', acme.sub);
    expect(heard).toEqual([
      {
        event: { kind: 'membership-removed', userId: acme.sub, tenantId: 'acme' },
        verdict: 'invalid_token',
      },
    ]);
  });
});
