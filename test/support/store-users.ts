/**
 * A user written straight to a store, with their personal tenant, for the
 * suites that test a component on a store (the session guard, the live
 * WebSockets) rather than the identity API.
 */
import type { Store } from '../../src/store/types.js';

/** A bcrypt hash of cost 4; no test logs in with it. */
const PASSWORD_HASH = '$2b$04$abcdefghijklmnopqrstuuSGZYtOLo8u7mqKVN5b1D5XnQkWq6PVy';

/** Creates user `id` (`email`) and their personal tenant `tenantId`, made at `now` (Unix seconds). */
export function createStoredUser(
  store: Store,
  user: { id: string; email: string; tenantId: string; now: number },
): ReturnType<Store['users']['createUser']> {
  return store.users.createUser({
    id: user.id,
    email: user.email,
    passwordHash: PASSWORD_HASH,
    createdAt: user.now,
    personalTenant: {
      tenantId: user.tenantId,
      type: 'usertenant',
      name: 'x',
      createdAt: user.now,
      modifiedAt: user.now,
      cloudRegion: 'local',
      createdBy: user.email,
    },
  });
}
