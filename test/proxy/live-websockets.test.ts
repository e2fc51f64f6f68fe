/**
 * Open WebSockets and membership events (issue 30): a WebSocket is judged
 * again on a membership's addition too, since a new membership of the pair
 * ends every token of an earlier one — even when the removal between them
 * was never heard here. The guard runs on the memory store; only the event
 * delivery is under the test's control, and the sockets are in-memory
 * streams (what is under test is the verdict, not the bytes).
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createSessionGuard } from '../../src/auth/revocation/sessions.js';
import type { AccessTokenClaims } from '../../src/auth/tokens/tokens.js';
import { createLiveWebSockets } from '../../src/proxy/forward/live-websockets.js';
import { createMemoryStore } from '../../src/store/index.js';
import type { SessionEvent, Store } from '../../src/store/types.js';

const NOW = Math.floor(Date.now() / 1000);

/** A memory store whose events of the kinds in `dropped` never reach its watchers. */
function storeDropping(dropped: Set<SessionEvent['kind']>): Store {
  const inner = createMemoryStore();
  return {
    ...inner,
    revocations: {
      ...inner.revocations,
      watchSessions: (l) =>
        inner.revocations.watchSessions({
          onEvent: (e) => dropped.has(e.kind) || l.onEvent(e),
          onLive: (v) => l.onLive(v),
        }),
    },
  };
}

/** Resolves with the client's side once the gateway has closed it (it ends the stream). */
function closedSoon(client: PassThrough, ms = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    client.once('finish', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

describe('open WebSockets and memberships', () => {
  it('a membership added after a removal this instance never heard closes the old token’s WebSocket', async () => {
    const dropped = new Set<SessionEvent['kind']>();
    const store = storeDropping(dropped);
    const sessions = createSessionGuard(store, { clockSkewSeconds: 30 });
    const live = createLiveWebSockets({ sessions, clockSkewSeconds: 30 });
    try {
      const user = await store.users.createUser({
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
      await store.tenants.upsertTenant(
        { tenantId: 'acme', type: 'orgtenant', name: 'A', cloudRegion: 'r', createdBy: 'a@b.c' },
        NOW,
      );
      await store.memberships.addMember('acme', user.id);
      const claims: AccessTokenClaims = {
        iss: 'i',
        aud: 'a',
        sub: user.id,
        tenant_id: 'acme',
        tenant_type: 'orgtenant',
        email: user.email,
        sv: 0,
        mg: (await store.memberships.membershipForToken('acme', user.id))?.generation as number,
        jti: 'jti-ws',
        iat: NOW,
        exp: NOW + 600,
      };
      await sessions.assertAlive(claims);
      const [client, upstream] = [new PassThrough(), new PassThrough()];
      const closed = closedSoon(client);
      live.track(client, upstream, {
        kind: 'user',
        userId: user.id,
        email: user.email,
        tenantId: 'acme',
        tenantType: 'orgtenant',
        scopes: [],
        claims,
      });
      await new Promise((resolve) => setImmediate(resolve));
      expect(live.size()).toBe(1);

      dropped.add('membership-removed');
      await store.memberships.removeMember('acme', user.id);
      await store.memberships.addMember('acme', user.id);

      expect(await closed).toBe(true);
      expect(live.size()).toBe(0);
      expect(upstream.destroyed).toBe(true);
    } finally {
      live.close();
      await sessions.close();
    }
  });
});
