/**
 * Issue 33, the refresh-token service on the memory store with a clock of
 * the test's own: the grace ends after REFRESH_GRACE_SECONDS, the idle and
 * absolute lifetimes, reuse of an older token (and one older than the store
 * remembers), and issue 42: a made-up token for a known family id is refused
 * and ends nothing, a past token's chain computed without the store's key is
 * refused and ends nothing, the bound per user and
 * tenant, the role's current scopes; and the token format itself (checksum,
 * the one derived successor).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAccounts, type RoleScopes } from '../../src/auth/accounts.js';
import type { BruteForceGuard } from '../../src/auth/passwords/brute-force.js';
import { loadKeySet } from '../../src/auth/tokens/keys.js';
import type { PasswordHasher } from '../../src/auth/passwords/passwords.js';
import {
  createRefreshTokens,
  MAX_FAMILIES_PER_TENANT,
  REFRESH_GRACE_SECONDS,
  RefreshRefused,
  type RefreshTokens,
} from '../../src/auth/refresh/refresh-grant.js';
import {
  newRefreshFamily,
  parseRefreshToken,
  successorOf,
  type ParsedRefreshToken,
} from '../../src/auth/refresh/refresh-tokens.js';
import { checksum } from '../../src/auth/clients/secrets.js';
import type { KeyRing } from '../../src/auth/tokens/tokens.js';
import { createMemoryStore } from '../../src/store/index.js';
import { REFRESH_USED_DIGESTS_KEPT } from '../../src/store/refresh.js';
import type { Store, UserRecord } from '../../src/store/types.js';
import { makeKeysDir } from '../support/gateway.js';
import { TOKEN_SETTINGS } from '../support/token-settings.js';

const T0 = 1_900_000_000;
const tokens = {
  ...TOKEN_SETTINGS,
  refresh: { enabled: true, ttlSeconds: 3600, absoluteTtlSeconds: 86_400 },
};

let keyring: KeyRing;
let store: Store;
let user: UserRecord;
let clock: number;
let refresh: RefreshTokens;
let roleScopes: RoleScopes;

beforeAll(async () => {
  keyring = { current: await loadKeySet((await makeKeysDir()).dir, { warn() {} }) };
});
beforeEach(async () => {
  store = createMemoryStore();
  user = await store.users.createUser({
    id: 'u1',
    email: 'u1@example.com',
    passwordHash: '$2b$04$unused',
    createdAt: T0,
    personalTenant: {
      tenantId: 'u1-home',
      type: 'usertenant',
      name: 'u1',
      createdAt: T0,
      modifiedAt: T0,
      cloudRegion: 'local',
      createdBy: 'u1@example.com',
    },
  });
  clock = T0;
  roleScopes = { current: { admin: ['orders:read', 'orders:write'], member: ['orders:read'] } };
  const accounts = createAccounts({
    store,
    roles: roleScopes,
    passwords: {} as PasswordHasher,
    bruteForce: {} as BruteForceGuard,
    keyring,
    tokens,
    cloudRegion: 'local',
    now: () => clock,
  });
  refresh = createRefreshTokens({
    store,
    accounts,
    keyring,
    tokens,
    roleScopes,
    now: () => clock,
  });
});

async function refused(token: string): Promise<RefreshRefused> {
  const err = await refresh.refresh(token, undefined).then(
    () => new Error('refreshed'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RefreshRefused);
  return err as RefreshRefused;
}

describe('the grace', () => {
  it(`gives the same successor for ${REFRESH_GRACE_SECONDS} s after a rotation, then is reuse`, async () => {
    const { refreshToken } = await refresh.begin(user, 'u1-home');
    const rotated = await refresh.refresh(refreshToken, undefined);
    expect(rotated.outcome).toBe('rotated');
    clock += REFRESH_GRACE_SECONDS;
    const again = await refresh.refresh(refreshToken, undefined);
    expect(again).toMatchObject({ outcome: 'grace', refreshToken: rotated.refreshToken });
    clock += 1;
    expect((await refused(refreshToken)).outcome).toBe('reused');
    // The family ended with it: the successor and both access tokens.
    expect((await refused(rotated.refreshToken)).outcome).toBe('invalid');
    for (const { claims } of [rotated, again])
      expect(await store.revocations.isTokenRevoked(claims.jti)).toBe(true);
  });
});

describe('lifetimes', () => {
  it('a token unused for ttlSeconds is refused; one used in time starts it again', async () => {
    const { refreshToken } = await refresh.begin(user, 'u1-home');
    clock += 3599;
    const next = await refresh.refresh(refreshToken, undefined);
    clock += 3599;
    const last = await refresh.refresh(next.refreshToken, undefined);
    clock += 3600;
    expect((await refused(last.refreshToken)).outcome).toBe('invalid');
  });

  it('the family ends at absoluteTtlSeconds, however often it was rotated', async () => {
    let { refreshToken } = await refresh.begin(user, 'u1-home');
    for (let t = 0; t < 23; t++) {
      clock += 3590;
      ({ refreshToken } = await refresh.refresh(refreshToken, undefined));
    }
    clock = T0 + 86_400;
    expect((await refused(refreshToken)).outcome).toBe('invalid');
  });
});

describe('reuse and forgery', () => {
  it('an older token of the family is reuse; one older than the store remembers is only refused', async () => {
    const { refreshToken: first } = await refresh.begin(user, 'u1-home');
    const tokens = [first];
    for (let i = 0; i < REFRESH_USED_DIGESTS_KEPT + 5; i++) {
      clock += REFRESH_GRACE_SECONDS + 1;
      tokens.push((await refresh.refresh(tokens.at(-1) as string, undefined)).refreshToken);
    }
    const current = tokens.at(-1) as string;
    // Forgotten: refused, and no reason to end the family.
    expect((await refused(first)).outcome).toBe('invalid');
    expect(await refresh.revokeByToken(first)).toBeNull();
    // Remembered: reuse, and the family ends.
    expect((await refused(tokens.at(-4) as string)).outcome).toBe('reused');
    expect((await refused(current)).outcome).toBe('invalid');
  });

  it('a made-up token for a known family id is refused and ends nothing (issue 42: the id is public)', async () => {
    const { refreshToken, claims } = await refresh.begin(user, 'u1-home');
    const forged = wellFormed(claims.fid as string);
    expect(parseRefreshToken(forged)).not.toBeNull();
    expect(await refresh.revokeByToken(forged)).toBeNull();
    expect((await refused(forged)).outcome).toBe('invalid');
    const rotated = await refresh.refresh(refreshToken, undefined);
    expect(rotated.outcome).toBe('rotated');
    clock += REFRESH_GRACE_SECONDS + 1;
    for (let i = 0; i < 3; i++)
      expect((await refused(wellFormed(claims.fid as string))).outcome).toBe('invalid');
    const family = await store.refresh.getRefreshFamily(claims.fid as string);
    expect(family?.revoked).toBe(false);
    for (const jti of [claims.jti, rotated.claims.jti])
      expect(await store.revocations.isTokenRevoked(jti)).toBe(false);
    expect((await refresh.refresh(rotated.refreshToken, undefined)).outcome).toBe('rotated');
  });

  it('the chain computed from a past token without the store’s key is refused and ends nothing (issue 42)', async () => {
    const { refreshToken: first } = await refresh.begin(user, 'u1-home');
    const second = await refresh.refresh(first, undefined);
    clock += REFRESH_GRACE_SECONDS + 1;
    const third = await refresh.refresh(second.refreshToken, undefined);
    // What anyone holding `first` computed before: HMAC keyed by the token's own secret.
    const guess = keylessSuccessor(keylessSuccessor(parseRefreshToken(first)!));
    expect(guess.token).not.toBe(third.refreshToken);
    expect((await refused(guess.token)).outcome).toBe('invalid');
    expect((await refresh.refresh(third.refreshToken, undefined)).outcome).toBe('rotated');
    // `first` itself, a token the family used, is still reuse.
    expect((await refused(first)).outcome).toBe('reused');
  });
});

/** A well-formed refresh token (its checksum holds) for `familyId` with a random secret. */
function wellFormed(familyId: string): string {
  const body = `tgr_${familyId}_${randomBytes(32).toString('base64url')}`;
  return `${body}_${checksum(body)}`;
}

/** The successor as it was derived before issue 42: keyed by the presented token's own secret. */
function keylessSuccessor(presented: ParsedRefreshToken): ParsedRefreshToken {
  const secret = createHmac('sha256', presented.secret)
    .update(`tgr successor ${presented.familyId}`)
    .digest('base64url');
  const body = `tgr_${presented.familyId}_${secret}`;
  const token = `${body}_${checksum(body)}`;
  return { familyId: presented.familyId, secret, token };
}

describe('scopes', () => {
  it('a refresh issues the role’s current scopes that the family holds, never more (issue 42)', async () => {
    const { refreshToken, claims } = await refresh.begin(user, 'u1-home');
    expect(claims.scope).toBe('orders:read orders:write');
    roleScopes.current = { admin: ['orders:read', 'billing:read'], member: [] };
    const next = await refresh.refresh(refreshToken, undefined);
    expect(next.claims.scope).toBe('orders:read');
    await expect(refresh.refresh(next.refreshToken, 'orders:write')).rejects.toMatchObject({
      code: 'invalid_scope',
    });
    roleScopes.current = { admin: ['orders:read', 'orders:write'], member: [] };
    expect((await refresh.refresh(next.refreshToken, undefined)).claims.scope).toBe(
      'orders:read orders:write',
    );
  });
});

it(`a user keeps at most ${MAX_FAMILIES_PER_TENANT} families per tenant: the oldest of that tenant ends, with its access tokens`, async () => {
  await store.tenants.upsertTenant(
    { tenantId: 'globex', type: 'orgtenant', name: 'G', cloudRegion: 'x', createdBy: 'x' },
    T0,
  );
  expect(await store.memberships.addMember('globex', user.id, 'member')).toBe(true);
  const home = await refresh.begin(user, 'u1-home');
  const first = await refresh.begin(user, 'globex');
  for (let i = 0; i < MAX_FAMILIES_PER_TENANT; i++) {
    clock += 1;
    await refresh.begin(user, 'globex');
  }
  expect(await store.revocations.isTokenRevoked(first.claims.jti)).toBe(true);
  expect((await refused(first.refreshToken)).outcome).toBe('invalid');
  // Sign-ins at globex never end the user's session at home.
  expect(await store.revocations.isTokenRevoked(home.claims.jti)).toBe(false);
  expect((await refresh.refresh(home.refreshToken, undefined)).outcome).toBe('rotated');
});

describe('the token format', () => {
  it('refuses a token whose checksum does not hold, before any lookup', () => {
    const { token } = newRefreshFamily();
    expect(parseRefreshToken(token)?.token).toBe(token);
    const typo = `${token.slice(0, 35)}${token[35] === 'a' ? 'b' : 'a'}${token.slice(36)}`;
    expect(parseRefreshToken(typo)).toBeNull();
    expect(parseRefreshToken(`${token}x`)).toBeNull();
  });

  it('derives one successor per token and key, in the same family, different per token and per key', () => {
    const a = parseRefreshToken(newRefreshFamily().token)!;
    const b = parseRefreshToken(newRefreshFamily().token)!;
    const [key, other] = [randomBytes(32), randomBytes(32)].map((k) => k.toString('base64url'));
    const next = successorOf(a, key!);
    expect(successorOf(a, key!)).toEqual(next);
    expect(next.familyId).toBe(a.familyId);
    expect(parseRefreshToken(next.token)).toEqual(next);
    expect(successorOf(b, key!).secret).not.toBe(next.secret);
    expect(successorOf(a, other!).secret).not.toBe(next.secret);
    expect(next.secret).not.toBe(a.secret);
    expect(next.secret).not.toBe(keylessSuccessor(a).secret);
  });
});
