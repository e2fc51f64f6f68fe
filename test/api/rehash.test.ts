/**
 * Hashes made at a lower bcrypt cost than configured are upgraded on the next
 * successful login, without ending the user's sessions.
 */
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bearer } from '../support/gateway.js';
import {
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../support/identity-fixture.js';

let fx: IdentityFixture;
beforeAll(async () => {
  fx = await startMemoryIdentityFixture({ passwords: { bcryptCost: 5 } });
});
afterAll(() => fx.close());

it('a cost-4 hash becomes cost 5 at login; live tokens keep working', async () => {
  const store = fx.gw.gateway.store;
  const now = Math.floor(Date.now() / 1000);
  const user = await store.users.createUser({
    id: 'rehash-user',
    email: 'old@example.com',
    passwordHash: bcrypt.hashSync('old-password-1', 4),
    createdAt: now,
    personalTenant: {
      tenantId: 'rehash-tenant',
      type: 'usertenant',
      name: 'old',
      createdAt: now,
      modifiedAt: now,
      cloudRegion: 'local',
      createdBy: 'old@example.com',
    },
  });
  const first = await tokenFor(
    fx.gw.url,
    { email: 'old@example.com', password: 'old-password-1' },
    'rehash-tenant',
  );
  const stored = await store.users.getUser(user.id);
  expect(bcrypt.getRounds(stored!.passwordHash)).toBe(5);
  expect(bcrypt.compareSync('old-password-1', stored!.passwordHash)).toBe(true);
  expect(stored!.sessionVersion).toBe(0);
  const res = await fetch(`${fx.gw.url}/1/tenants/current`, {
    headers: { authorization: bearer(first.access_token) },
  });
  expect(res.status).toBe(200);
});
