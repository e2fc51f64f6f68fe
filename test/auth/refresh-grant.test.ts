/**
 * Issue 33, the refresh-token service on the memory store with a clock of
 * the test's own: the grace ends after REFRESH_GRACE_SECONDS, the idle and
 * absolute lifetimes, reuse of an older token (and one older than the store remembers),
 * a made-up token for a known family id, the per-user bound; and the token
 * format itself (checksum, the one derived successor).
 */
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAccounts } from '../../src/auth/accounts.js';
import type { BruteForceGuard } from '../../src/auth/brute-force.js';
import { loadKeySet } from '../../src/auth/keys.js';
import type { PasswordHasher } from '../../src/auth/passwords.js';
import {
  createRefreshTokens,
  MAX_FAMILIES_PER_USER,
  REFRESH_GRACE_SECONDS,
  RefreshRefused,
  type RefreshTokens,
} from '../../src/auth/refresh-grant.js';
import { newRefreshFamily, parseRefreshToken, successorOf } from '../../src/auth/refresh-tokens.js';
import type { KeyRing } from '../../src/auth/tokens.js';
import { createMemoryStore } from '../../src/store/index.js';
import { REFRESH_USED_DIGESTS_KEPT } from '../../src/store/refresh-types.js';
import type { Store, UserRecord } from '../../src/store/types.js';
import { makeKeysDir } from '../support/gateway.js';

const T0 = 1_900_000_000;
const tokens = {
  issuer: 'tenant-gateway',
  audience: 'tenant-api',
  ttlSeconds: 600,
  algorithms: ['EdDSA' as const, 'ES256' as const],
  clockSkewSeconds: 30,
  refresh: { enabled: true, ttlSeconds: 3600, absoluteTtlSeconds: 86_400 },
};

let keyring: KeyRing;
let store: Store;
let user: UserRecord;
let clock: number;
let refresh: RefreshTokens;

beforeAll(async () => {
  keyring = { current: await loadKeySet((await makeKeysDir()).dir, { warn() {} }) };
});
beforeEach(async () => {
  store = createMemoryStore();
  user = await store.createUser({
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
  const accounts = createAccounts({
    store,
    passwords: {} as PasswordHasher,
    bruteForce: {} as BruteForceGuard,
    keyring,
    tokens,
    cloudRegion: 'local',
    now: () => clock,
  });
  refresh = createRefreshTokens({ store, accounts, keyring, tokens, now: () => clock });
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
      expect(await store.isTokenRevoked(claims.jti)).toBe(true);
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

  it('a made-up token for a known family id is refused and ends nothing', async () => {
    const { refreshToken, claims } = await refresh.begin(user, 'u1-home');
    const forged = newRefreshFamily().token.replace(/^tgr_[a-z2-7]{26}/, `tgr_${claims.fid}`);
    expect((await refused(forged)).outcome).toBe('invalid');
    expect(await refresh.revokeByToken(forged)).toBeNull();
    expect((await refresh.refresh(refreshToken, undefined)).outcome).toBe('rotated');
  });
});

it(`a user keeps at most ${MAX_FAMILIES_PER_USER} families: the oldest ends, with its access tokens`, async () => {
  const first = await refresh.begin(user, 'u1-home');
  for (let i = 0; i < MAX_FAMILIES_PER_USER; i++) {
    clock += 1;
    await refresh.begin(user, 'u1-home');
  }
  expect(await store.isTokenRevoked(first.claims.jti)).toBe(true);
  expect((await refused(first.refreshToken)).outcome).toBe('invalid');
});

describe('the token format', () => {
  it('refuses a token whose checksum does not hold, before any lookup', () => {
    const { token } = newRefreshFamily();
    expect(parseRefreshToken(token)?.token).toBe(token);
    const typo = `${token.slice(0, 35)}${token[35] === 'a' ? 'b' : 'a'}${token.slice(36)}`;
    expect(parseRefreshToken(typo)).toBeNull();
    expect(parseRefreshToken(`${token}x`)).toBeNull();
  });

  it('derives one successor per token, in the same family, different per token', () => {
    const a = parseRefreshToken(newRefreshFamily().token)!;
    const b = parseRefreshToken(newRefreshFamily().token)!;
    expect(successorOf(a)).toEqual(successorOf(a));
    expect(successorOf(a).familyId).toBe(a.familyId);
    expect(parseRefreshToken(successorOf(a).token)).toEqual(successorOf(a));
    expect(successorOf(a).secret).not.toBe(successorOf(b).secret);
    expect(successorOf(a).secret).not.toBe(a.secret);
  });
});
