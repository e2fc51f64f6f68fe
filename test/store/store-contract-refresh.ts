/**
 * The store contract for refresh-token families (issue 33): rotation, the
 * grace for a repeated refresh, reuse detection (a token the family used
 * before; issue 42: a digest it never had is invalid and ends nothing), idle
 * and absolute ends, the cap per user and tenant (issue 42), each family's
 * successor key, and the race of many refreshes of one token. Registered by
 * `describeStoreContract`.
 *
 * Families are created around the real clock (Redis expires their records on
 * it); the `now` given to a rotation moves time forward instead.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import {
  REFRESH_USED_DIGESTS_KEPT,
  type RefreshFamily,
  type RotateRefreshInput,
  type Store,
} from '../../src/store/types.js';
import { IDLE, newDigest, newFamily, realNow } from './store-fixtures.js';

const GRACE = 10;

/** A rotation of `family`'s current token (or `presented`) at `now`, issuing a fresh jti. */
function rotation(
  family: RefreshFamily,
  overrides: Partial<RotateRefreshInput> = {},
): RotateRefreshInput {
  const now = overrides.now ?? family.createdAt + 60;
  return {
    familyId: family.familyId,
    presentedDigest: family.currentDigest,
    successorDigest: newDigest(),
    jti: randomUUID(),
    accessExpiresAt: now + 900,
    now,
    graceSeconds: GRACE,
    idleTtlSeconds: IDLE,
    ...overrides,
  };
}

const byId = (families: RefreshFamily[]): RefreshFamily[] =>
  [...families].sort((a, b) => (a.familyId < b.familyId ? -1 : 1));

/** @param current the store of the running test (a fresh one each). */
export function describeRefreshContract(current: () => Store): void {
  describe('refresh families', () => {
    describeRotation(current);
    describeGraceAndReuse(current);
    describeEnds(current);
    describeCap(current);
    describeRevocation(current);
    describeListing(current);
  });
}

function describeRotation(current: () => Store): void {
  it('keeps a new family as given, and a copy of it', async () => {
    const store = current();
    const family = newFamily();
    expect(await store.refresh.createRefreshFamily(family, 5)).toEqual([]);
    expect(await store.refresh.getRefreshFamily(family.familyId)).toEqual(family);
    family.accessTokens['other'] = 1;
    const read = await store.refresh.getRefreshFamily(family.familyId);
    expect(read?.accessTokens).not.toHaveProperty('other');
    read!.revoked = true;
    expect((await store.refresh.getRefreshFamily(family.familyId))?.revoked).toBe(false);
    expect(await store.refresh.getRefreshFamily('rf-nobody')).toBeNull();
  });

  it('makes a successor key per family, kept through rotations, answered only to rotate', async () => {
    const store = current();
    const [a, b] = [newFamily(), newFamily()];
    await store.refresh.createRefreshFamily(a, 5);
    await store.refresh.createRefreshFamily(b, 5);
    const keyed = await store.refresh.getRefreshFamilyToRotate(a.familyId);
    expect(keyed?.family).toEqual(a);
    const key = keyed?.successorKey as string;
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await store.refresh.getRefreshFamilyToRotate(b.familyId))?.successorKey).not.toBe(key);
    const rotated = await store.refresh.rotateRefreshToken(rotation(a));
    expect(JSON.stringify(rotated)).not.toContain(key);
    expect(JSON.stringify(await store.refresh.getRefreshFamily(a.familyId))).not.toContain(key);
    expect((await store.refresh.getRefreshFamilyToRotate(a.familyId))?.successorKey).toBe(key);
    expect(await store.refresh.getRefreshFamilyToRotate('rf-nobody')).toBeNull();
  });

  it('refuses a family id in use and a cap below one', async () => {
    const store = current();
    const family = newFamily();
    await store.refresh.createRefreshFamily(family, 5);
    const err = await store.refresh.createRefreshFamily({ ...family }, 5).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).code).toBe('internal_error');
    await expect(store.refresh.createRefreshFamily(newFamily(), 0)).rejects.toThrow(RangeError);
  });

  it('rotates the current token: the successor is current, the presented one previous', async () => {
    const store = current();
    const family = newFamily();
    await store.refresh.createRefreshFamily(family, 5);
    const input = rotation(family);
    const result = await store.refresh.rotateRefreshToken(input);
    const rotated: RefreshFamily = {
      ...family,
      currentDigest: input.successorDigest,
      currentExpiresAt: input.now + IDLE,
      previous: {
        digest: family.currentDigest,
        usedAt: input.now,
        successorDigest: input.successorDigest,
      },
      accessTokens: { ...family.accessTokens, [input.jti]: input.accessExpiresAt },
    };
    expect(result).toEqual({ outcome: 'rotated', family: rotated });
    expect(await store.refresh.getRefreshFamily(family.familyId)).toEqual(rotated);

    const next = rotation(rotated, { now: input.now + 120 });
    const again = await store.refresh.rotateRefreshToken(next);
    expect(again.outcome).toBe('rotated');
    expect(again.outcome !== 'invalid' && again.family.previous?.digest).toBe(
      input.successorDigest,
    );
  });

  it('never lets a rotation carry the idle expiry past the absolute end', async () => {
    const store = current();
    const now = realNow();
    const family = newFamily({ absoluteExpiresAt: now + 600, currentExpiresAt: now + 300 });
    await store.refresh.createRefreshFamily(family, 5);
    const result = await store.refresh.rotateRefreshToken(rotation(family, { now: now + 200 }));
    expect(result.outcome === 'rotated' && result.family.currentExpiresAt).toBe(now + 600);
  });

  it('prunes access tokens expired before now, keeping one that expires now', async () => {
    const store = current();
    const now = realNow();
    const family = newFamily({
      accessTokens: { gone: now + 100, edge: now + 200, kept: now + 900 },
    });
    await store.refresh.createRefreshFamily(family, 5);
    const input = rotation(family, { now: now + 200 });
    const result = await store.refresh.rotateRefreshToken(input);
    expect(result.outcome !== 'invalid' && result.family.accessTokens).toEqual({
      edge: now + 200,
      kept: now + 900,
      [input.jti]: input.accessExpiresAt,
    });
    expect((await store.refresh.getRefreshFamily(family.familyId))?.accessTokens).toEqual(
      result.outcome !== 'invalid' && result.family.accessTokens,
    );
  });
}

function describeGraceAndReuse(current: () => Store): void {
  it('a repeat within the grace keeps the one successor current and adds its jti', async () => {
    const store = current();
    const family = newFamily();
    await store.refresh.createRefreshFamily(family, 5);
    const first = rotation(family);
    await store.refresh.rotateRefreshToken(first);
    for (const late of [1, GRACE]) {
      const repeat = rotation(family, {
        successorDigest: first.successorDigest,
        now: first.now + late,
      });
      const result = await store.refresh.rotateRefreshToken(repeat);
      expect(result.outcome).toBe('grace');
      if (result.outcome !== 'grace') return;
      expect(result.family.currentDigest).toBe(first.successorDigest);
      expect(result.family.previous).toEqual({
        digest: family.currentDigest,
        usedAt: first.now,
        successorDigest: first.successorDigest,
      });
      expect(result.family.accessTokens).toHaveProperty(repeat.jti, repeat.accessExpiresAt);
      expect(result.family.accessTokens).toHaveProperty(first.jti, first.accessExpiresAt);
      expect(result.family.revoked).toBe(false);
    }
    // Another successor offered within the grace changes nothing: the first stays the one.
    const other = await store.refresh.rotateRefreshToken(rotation(family, { now: first.now + 1 }));
    expect(other.outcome).toBe('grace');
    expect(other.outcome === 'grace' && other.family.currentDigest).toBe(first.successorDigest);
    // The successor handed out twice is still the one live token.
    const next = await store.refresh.rotateRefreshToken(
      rotation(family, { presentedDigest: first.successorDigest, now: first.now + GRACE + 1 }),
    );
    expect(next.outcome).toBe('rotated');
  });

  it('the used token past the grace is reuse: the family is revoked at once, naming its access tokens', async () => {
    const store = current();
    const family = newFamily();
    await store.refresh.createRefreshFamily(family, 5);
    const first = rotation(family);
    await store.refresh.rotateRefreshToken(first);
    const stolen = rotation(family, { now: first.now + GRACE + 1 });
    const result = await store.refresh.rotateRefreshToken(stolen);
    expect(result.outcome).toBe('reused');
    if (result.outcome !== 'reused') return;
    expect(result.family.revoked).toBe(true);
    expect(Object.keys(result.family.accessTokens).sort()).toEqual(
      [...Object.keys(family.accessTokens), first.jti].sort(),
    );
    expect(result.family.currentDigest).toBe(first.successorDigest);
    expect(await store.refresh.getRefreshFamily(family.familyId)).toEqual(result.family);
    // The honest client's token is dead with the family.
    const honest = rotation(family, { presentedDigest: first.successorDigest, now: stolen.now });
    expect(await store.refresh.rotateRefreshToken(honest)).toEqual({ outcome: 'invalid' });
  });

  it('a token used two rotations ago is reuse, even within the grace of the last', async () => {
    const store = current();
    const family = newFamily();
    await store.refresh.createRefreshFamily(family, 5);
    const first = rotation(family);
    await store.refresh.rotateRefreshToken(first);
    await store.refresh.rotateRefreshToken(
      rotation(family, { presentedDigest: first.successorDigest, now: first.now + 1 }),
    );
    const result = await store.refresh.rotateRefreshToken(rotation(family, { now: first.now + 2 }));
    expect(result.outcome).toBe('reused');
  });

  it('a digest the family never had is invalid and changes nothing (issue 42: a family id is public)', async () => {
    const store = current();
    const family = newFamily();
    await store.refresh.createRefreshFamily(family, 5);
    const input = rotation(family);
    await store.refresh.rotateRefreshToken(input);
    const before = await store.refresh.getRefreshFamily(family.familyId);
    for (const late of [1, 100]) {
      const forged = rotation(family, { presentedDigest: newDigest(), now: input.now + late });
      expect(await store.refresh.rotateRefreshToken(forged)).toEqual({ outcome: 'invalid' });
    }
    expect(await store.refresh.getRefreshFamily(family.familyId)).toEqual(before);
    // The honest client's token still rotates.
    const honest = rotation(family, {
      presentedDigest: input.successorDigest,
      now: input.now + 100,
    });
    expect((await store.refresh.rotateRefreshToken(honest)).outcome).toBe('rotated');
    const unknown = rotation(family, { familyId: 'rf-nobody' });
    expect(await store.refresh.rotateRefreshToken(unknown)).toEqual({ outcome: 'invalid' });
  });

  it('a used digest is still reuse after made-up ones were refused', async () => {
    const store = current();
    const family = newFamily();
    await store.refresh.createRefreshFamily(family, 5);
    const first = rotation(family);
    await store.refresh.rotateRefreshToken(first);
    const second = rotation(family, { presentedDigest: first.successorDigest, now: first.now + 1 });
    await store.refresh.rotateRefreshToken(second);
    const forged = rotation(family, { presentedDigest: newDigest(), now: first.now + 2 });
    expect(await store.refresh.rotateRefreshToken(forged)).toEqual({ outcome: 'invalid' });
    // The family's first token: neither current nor previous, but remembered as used.
    const replay = await store.refresh.rotateRefreshToken(rotation(family, { now: first.now + 3 }));
    expect(replay.outcome).toBe('reused');
    expect(replay.outcome === 'reused' && Object.keys(replay.family.accessTokens)).toEqual(
      expect.arrayContaining([first.jti, second.jti]),
    );
    expect((await store.refresh.getRefreshFamily(family.familyId))?.revoked).toBe(true);
  });

  it(`remembers ${REFRESH_USED_DIGESTS_KEPT} used tokens before the previous one; older ones are invalid`, async () => {
    const store = current();
    const family = newFamily();
    await store.refresh.createRefreshFamily(family, 5);
    let now = family.createdAt;
    const used = [family.currentDigest];
    for (let i = 0; i < REFRESH_USED_DIGESTS_KEPT + 2; i++) {
      now += 1;
      const input = rotation(family, { presentedDigest: used.at(-1)!, now });
      expect((await store.refresh.rotateRefreshToken(input)).outcome).toBe('rotated');
      used.push(input.successorDigest);
    }
    // used.at(-1) is current, used.at(-2) previous, then the remembered ones.
    const late = now + GRACE + 1;
    expect(
      await store.refresh.rotateRefreshToken(
        rotation(family, { presentedDigest: used[0], now: late }),
      ),
    ).toEqual({ outcome: 'invalid' });
    const remembered = used[1]!;
    const result = await store.refresh.rotateRefreshToken(
      rotation(family, { presentedDigest: remembered, now: late }),
    );
    expect(result.outcome).toBe('reused');
  });

  it('50 concurrent refreshes of one token: exactly one rotates, the rest get the same successor', async () => {
    const store = current();
    const family = newFamily();
    await store.refresh.createRefreshFamily(family, 5);
    const successorDigest = newDigest();
    const now = family.createdAt + 60;
    const inputs = Array.from({ length: 50 }, () => rotation(family, { successorDigest, now }));
    const results = await Promise.all(
      inputs.map((input) => store.refresh.rotateRefreshToken(input)),
    );
    const outcomes = results.map((result) => result.outcome);
    expect(outcomes.filter((outcome) => outcome === 'rotated')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === 'grace')).toHaveLength(49);
    for (const result of results) {
      expect(result.outcome !== 'invalid' && result.family.currentDigest).toBe(successorDigest);
    }
    const stored = await store.refresh.getRefreshFamily(family.familyId);
    expect(stored?.revoked).toBe(false);
    expect(stored?.currentDigest).toBe(successorDigest);
    for (const input of inputs) expect(stored?.accessTokens).toHaveProperty(input.jti);
  });
}

function describeEnds(current: () => Store): void {
  it('a revoked family refuses even its current token', async () => {
    const store = current();
    const family = newFamily();
    await store.refresh.createRefreshFamily(family, 5);
    const revoked = await store.refresh.revokeRefreshFamily(family.familyId);
    expect(revoked).toEqual({ ...family, revoked: true });
    expect(await store.refresh.rotateRefreshToken(rotation(family))).toEqual({
      outcome: 'invalid',
    });
    expect(await store.refresh.getRefreshFamily(family.familyId)).toEqual(revoked);
  });

  it('the current token is refused from its idle expiry on, and that changes nothing', async () => {
    const store = current();
    const family = newFamily();
    await store.refresh.createRefreshFamily(family, 5);
    const idle = rotation(family, { now: family.currentExpiresAt });
    expect(await store.refresh.rotateRefreshToken(idle)).toEqual({ outcome: 'invalid' });
    expect(await store.refresh.getRefreshFamily(family.familyId)).toEqual(family);
    const inTime = rotation(family, { now: family.currentExpiresAt - 1 });
    expect((await store.refresh.rotateRefreshToken(inTime)).outcome).toBe('rotated');
  });

  it('the family ends at its absolute end, whatever the rotation', async () => {
    const store = current();
    const now = realNow();
    const family = newFamily({ absoluteExpiresAt: now + 100, currentExpiresAt: now + 100 });
    await store.refresh.createRefreshFamily(family, 5);
    const first = rotation(family, { now: now + 50 });
    expect((await store.refresh.rotateRefreshToken(first)).outcome).toBe('rotated');
    const atEnd = rotation(family, { presentedDigest: first.successorDigest, now: now + 100 });
    expect(await store.refresh.rotateRefreshToken(atEnd)).toEqual({ outcome: 'invalid' });
    // Nor is an old token reuse any more: there is nothing left to end.
    const old = rotation(family, { now: now + 100 });
    expect(await store.refresh.rotateRefreshToken(old)).toEqual({ outcome: 'invalid' });
    expect((await store.refresh.getRefreshFamily(family.familyId))?.revoked).toBe(false);
  });
}

function describeCap(current: () => Store): void {
  it('counts the cap per tenant: a user’s families elsewhere are never ended (issue 42)', async () => {
    const store = current();
    const userId = `u-${randomUUID().slice(0, 8)}`;
    const home = newFamily({ userId, tenantId: 'acme' });
    await store.refresh.createRefreshFamily(home, 2);
    const now = realNow();
    const elsewhere = [0, 1, 2, 3].map((i) =>
      newFamily({ userId, tenantId: 'globex', absoluteExpiresAt: now + 1000 + i }),
    );
    const ended: RefreshFamily[] = [];
    for (const family of elsewhere)
      ended.push(...(await store.refresh.createRefreshFamily(family, 2)));
    expect(byId(ended)).toEqual(byId(elsewhere.slice(0, 2).map((f) => ({ ...f, revoked: true }))));
    expect((await store.refresh.getRefreshFamily(home.familyId))?.revoked).toBe(false);
    expect((await store.refresh.rotateRefreshToken(rotation(home))).outcome).toBe('rotated');
    // And acme's own cap still holds.
    const next = newFamily({ userId, tenantId: 'acme' });
    expect(await store.refresh.createRefreshFamily(next, 1)).toEqual([
      expect.objectContaining({ familyId: home.familyId, revoked: true }),
    ]);
    expect((await store.refresh.getRefreshFamily(elsewhere[3]!.familyId))?.revoked).toBe(false);
  });

  it('past the cap ends the user’s oldest families and returns them revoked', async () => {
    const store = current();
    const now = realNow();
    const userId = `u-${randomUUID().slice(0, 8)}`;
    const families = [0, 1, 2, 3].map((i) =>
      newFamily({ userId, createdAt: now + i, absoluteExpiresAt: now + 1000 + i }),
    );
    const stranger = newFamily({ createdAt: now, absoluteExpiresAt: now + 500 });
    await store.refresh.createRefreshFamily(stranger, 1);
    expect(await store.refresh.createRefreshFamily(families[0]!, 2)).toEqual([]);
    expect(await store.refresh.createRefreshFamily(families[1]!, 2)).toEqual([]);
    expect(await store.refresh.createRefreshFamily(families[2]!, 2)).toEqual([
      { ...families[0]!, revoked: true },
    ]);
    // A lower cap now: two go at once.
    expect(byId(await store.refresh.createRefreshFamily(families[3]!, 1))).toEqual(
      byId([families[1]!, families[2]!].map((f) => ({ ...f, revoked: true }))),
    );
    expect((await store.refresh.getRefreshFamily(families[0]!.familyId))?.revoked).toBe(true);
    expect((await store.refresh.getRefreshFamily(families[3]!.familyId))?.revoked).toBe(false);
    expect((await store.refresh.getRefreshFamily(stranger.familyId))?.revoked).toBe(false);
  });

  it('never ends the family being created, even one ending no later than the others', async () => {
    const store = current();
    const now = realNow();
    const userId = `u-${randomUUID().slice(0, 8)}`;
    const old = newFamily({ userId, familyId: 'rf-zzz', absoluteExpiresAt: now + 1000 });
    const young = newFamily({ userId, familyId: 'rf-aaa', absoluteExpiresAt: now + 1000 });
    await store.refresh.createRefreshFamily(old, 1);
    expect(await store.refresh.createRefreshFamily(young, 1)).toEqual([{ ...old, revoked: true }]);
    expect((await store.refresh.getRefreshFamily(young.familyId))?.revoked).toBe(false);
  });

  it('families past their absolute end leave the index without counting', async () => {
    const store = current();
    const now = realNow();
    const userId = `u-${randomUUID().slice(0, 8)}`;
    const ended = newFamily({ userId, absoluteExpiresAt: now + 10, currentExpiresAt: now + 10 });
    const live = newFamily({ userId, absoluteExpiresAt: now + 1000 });
    await store.refresh.createRefreshFamily(ended, 2);
    await store.refresh.createRefreshFamily(live, 2);
    const later = newFamily({ userId, createdAt: now + 10, absoluteExpiresAt: now + 2000 });
    expect(await store.refresh.createRefreshFamily(later, 2)).toEqual([]);
    expect((await store.refresh.getRefreshFamily(live.familyId))?.revoked).toBe(false);
    expect(byId(await store.refresh.revokeRefreshFamiliesOf(userId))).toEqual(
      byId([live, later].map((f) => ({ ...f, revoked: true }))),
    );
  });

  it('a revoked or reused family no longer counts against the cap', async () => {
    const store = current();
    const userId = `u-${randomUUID().slice(0, 8)}`;
    const [a, b, c] = [newFamily({ userId }), newFamily({ userId }), newFamily({ userId })];
    await store.refresh.createRefreshFamily(a, 2);
    await store.refresh.createRefreshFamily(b, 2);
    await store.refresh.revokeRefreshFamily(a.familyId);
    expect(await store.refresh.createRefreshFamily(c, 2)).toEqual([]);
    const first = rotation(b);
    await store.refresh.rotateRefreshToken(first);
    const reused = await store.refresh.rotateRefreshToken(
      rotation(b, { now: first.now + GRACE + 1 }),
    );
    expect(reused.outcome).toBe('reused');
    expect(await store.refresh.createRefreshFamily(newFamily({ userId }), 2)).toEqual([]);
  });
}

function describeRevocation(current: () => Store): void {
  it('revoking a family is idempotent; an unknown one is null', async () => {
    const store = current();
    const family = newFamily();
    await store.refresh.createRefreshFamily(family, 5);
    const revoked = { ...family, revoked: true };
    expect(await store.refresh.revokeRefreshFamily(family.familyId)).toEqual(revoked);
    expect(await store.refresh.revokeRefreshFamily(family.familyId)).toEqual(revoked);
    expect(await store.refresh.revokeRefreshFamily('rf-nobody')).toBeNull();
  });

  it('revokes a user’s live families, of one tenant or all, through the index', async () => {
    const store = current();
    const userId = `u-${randomUUID().slice(0, 8)}`;
    const acme = [newFamily({ userId }), newFamily({ userId })];
    const other = newFamily({ userId, tenantId: 'other' });
    const before = newFamily({ userId });
    const stranger = newFamily();
    for (const family of [...acme, other, before, stranger]) {
      await store.refresh.createRefreshFamily(family, 10);
    }
    await store.refresh.revokeRefreshFamily(before.familyId);
    expect(byId(await store.refresh.revokeRefreshFamiliesOf(userId, 'acme'))).toEqual(
      byId(acme.map((f) => ({ ...f, revoked: true }))),
    );
    expect(await store.refresh.revokeRefreshFamiliesOf(userId, 'acme')).toEqual([]);
    expect(await store.refresh.revokeRefreshFamiliesOf(userId)).toEqual([
      { ...other, revoked: true },
    ]);
    expect(await store.refresh.revokeRefreshFamiliesOf(userId)).toEqual([]);
    expect(await store.refresh.revokeRefreshFamiliesOf('u-nobody')).toEqual([]);
    expect((await store.refresh.getRefreshFamily(stranger.familyId))?.revoked).toBe(false);
    expect(await store.refresh.rotateRefreshToken(rotation(acme[0]!))).toEqual({
      outcome: 'invalid',
    });
  });
}

function describeListing(current: () => Store): void {
  it('lists a user’s live families of every tenant through the index, with the login’s user agent and address (issue 44)', async () => {
    const store = current();
    const userId = `u-${randomUUID().slice(0, 8)}`;
    const from = { userAgent: 'Mozilla/5.0 (X11) Firefox/140.0', ip: '203.0.113.7' };
    const acme = newFamily({ userId, ...from });
    const other = newFamily({ userId, tenantId: 'other' });
    const ended = newFamily({ userId });
    const stranger = newFamily();
    for (const family of [acme, other, ended, stranger]) {
      await store.refresh.createRefreshFamily(family, 10);
    }
    await store.refresh.revokeRefreshFamily(ended.familyId);
    expect(byId(await store.refresh.listRefreshFamilies(userId))).toEqual(byId([acme, other]));
    expect(await store.refresh.getRefreshFamily(acme.familyId)).toEqual(acme);
    expect(await store.refresh.listRefreshFamilies('u-nobody')).toEqual([]);
  });

  it('keeps the user agent and address through a rotation; lists a rotated family, not a reused one', async () => {
    const store = current();
    const userId = `u-${randomUUID().slice(0, 8)}`;
    const family = newFamily({ userId, userAgent: 'curl/8.5.0', ip: '2001:db8::1' });
    await store.refresh.createRefreshFamily(family, 5);
    const first = rotation(family, { now: realNow() });
    const rotated = await store.refresh.rotateRefreshToken(first);
    expect(rotated.outcome).toBe('rotated');
    const [listed] = await store.refresh.listRefreshFamilies(userId);
    expect(listed).toMatchObject({ userAgent: 'curl/8.5.0', ip: '2001:db8::1' });
    expect(listed?.previous?.usedAt).toBe(first.now);
    const reused = await store.refresh.rotateRefreshToken(
      rotation(family, { now: first.now + GRACE + 1 }),
    );
    expect(reused.outcome).toBe('reused');
    expect(await store.refresh.listRefreshFamilies(userId)).toEqual([]);
  });

  it('leaves out a family past its absolute end or idle with no live access token', async () => {
    const store = current();
    const userId = `u-${randomUUID().slice(0, 8)}`;
    const now = realNow();
    const idle = newFamily({ userId, currentExpiresAt: now - 1, accessTokens: { j: now - 1 } });
    const idleInUse = newFamily({
      userId,
      currentExpiresAt: now - 1,
      accessTokens: { j: now + 600 },
    });
    const over = newFamily({
      userId,
      createdAt: now - 100,
      absoluteExpiresAt: now - 1,
      currentExpiresAt: now - 1,
      accessTokens: { j: now + 600 },
    });
    for (const family of [idle, idleInUse, over])
      await store.refresh.createRefreshFamily(family, 10);
    expect(await store.refresh.listRefreshFamilies(userId)).toEqual([idleInUse]);
  });
}
