/**
 * The in-memory store's refresh-token families (see `memory-state.ts`): the
 * same rules as the Redis store's (`redis-refresh.ts`). A record vanishes at
 * `refreshRecordExpiry` (checked when read, and in a sweep whenever the map
 * has doubled since the last one); a user's index holds their live families
 * and the tenant of each (the cap is per user and tenant).
 */
import { ensureOpen, type MemoryState } from './memory-state.js';
import {
  checkFamilyTimes,
  checkMaxPerTenant,
  checkRotationInput,
  endsSooner,
  familyIdTaken,
  familyToRotate,
  publicFamily,
  refreshRecordExpiry,
  storedFamily,
  type StoredRefreshFamily,
} from './refresh-records.js';
import { applyRotation, rotationOutcome } from './refresh-rotation.js';
import { isLiveFamily, type RefreshFamily, type RefreshStore } from './refresh.js';

/** Below this many records a sweep for vanished ones is not worth it. */
const MIN_SWEEP_SIZE = 1024;

const nowSeconds = (): number => Date.now() / 1000;

type Records = MemoryState['refreshFamilies'];
type Index = MemoryState['refreshFamiliesOfUser'];

/** The stored family, unless its record has vanished. */
function read(records: Records, familyId: string): StoredRefreshFamily | undefined {
  const record = records.get(familyId);
  if (record === undefined) return undefined;
  if (nowSeconds() >= record.expiresAt) {
    records.delete(familyId);
    return undefined;
  }
  return record.family;
}

function write(records: Records, family: StoredRefreshFamily): void {
  records.set(family.familyId, { family, expiresAt: refreshRecordExpiry(family) });
}

function unindex(index: Index, userId: string, familyId: string): void {
  const families = index.get(userId);
  families?.delete(familyId);
  if (families?.size === 0) index.delete(userId);
}

/** Takes the family out of its user's index and revokes it if it is not yet; whether this did. */
function revoke(state: MemoryState, family: StoredRefreshFamily): boolean {
  unindex(state.refreshFamiliesOfUser, family.userId, family.familyId);
  if (family.revoked) return false;
  family.revoked = true;
  write(state.refreshFamilies, family);
  return true;
}

/** Drops vanished records, and index entries of families gone. */
function sweep({ refreshFamilies: records, refreshFamiliesOfUser: index }: MemoryState): void {
  const now = nowSeconds();
  for (const [familyId, record] of records) {
    if (now >= record.expiresAt) records.delete(familyId);
  }
  for (const [userId, families] of index) {
    for (const familyId of families.keys()) {
      if (!records.has(familyId)) unindex(index, userId, familyId);
    }
  }
}

interface Indexed {
  familyId: string;
  tenantId: string;
  absoluteExpiresAt: number;
}

/** A user's indexed families, the soonest to end first. */
function indexed(index: Index, userId: string): Indexed[] {
  return [...(index.get(userId) ?? [])]
    .map(([familyId, entry]) => ({ familyId, ...entry }))
    .sort(endsSooner);
}

/**
 * Enters a new family in its user's index, dropping those ended at its
 * creation; returns the ids it pushed out past the cap of its tenant (never
 * its own, never another tenant's).
 */
function enter(index: Index, family: RefreshFamily, maxPerTenant: number): string[] {
  const families = index.get(family.userId) ?? new Map<string, Omit<Indexed, 'familyId'>>();
  index.set(family.userId, families);
  for (const [familyId, { absoluteExpiresAt }] of families) {
    if (absoluteExpiresAt <= family.createdAt) families.delete(familyId);
  }
  const order = indexed(index, family.userId).filter((f) => f.tenantId === family.tenantId);
  const out = order.slice(0, Math.max(0, order.length - (maxPerTenant - 1)));
  for (const { familyId } of out) families.delete(familyId);
  const { tenantId, absoluteExpiresAt } = family;
  families.set(family.familyId, { tenantId, absoluteExpiresAt });
  return out.map(({ familyId }) => familyId);
}

/** The refresh-family methods of the memory store, over its `state`. */
export function memoryRefreshFamilies(state: MemoryState): RefreshStore {
  const { refreshFamilies: records, refreshFamiliesOfUser: index } = state;
  let nextSweepAt = MIN_SWEEP_SIZE;
  /** Refuses once closed; sweeps whenever the records have doubled since the last sweep. */
  const open = (): void => {
    ensureOpen(state);
    if (records.size < nextSweepAt) return;
    sweep(state);
    nextSweepAt = Math.max(MIN_SWEEP_SIZE, records.size * 2);
  };

  return {
    async createRefreshFamily(family, maxPerTenant) {
      checkMaxPerTenant(maxPerTenant);
      checkFamilyTimes(family);
      open();
      if (read(records, family.familyId) !== undefined) throw familyIdTaken();
      write(records, storedFamily(family));
      return enter(index, family, maxPerTenant).flatMap((familyId) => {
        const evicted = read(records, familyId);
        return evicted !== undefined && revoke(state, evicted) ? [publicFamily(evicted)] : [];
      });
    },

    async rotateRefreshToken(input) {
      checkRotationInput(input);
      open();
      const family = read(records, input.familyId);
      const outcome = family === undefined ? 'invalid' : rotationOutcome(family, input);
      if (family === undefined || outcome === 'invalid') return { outcome: 'invalid' };
      applyRotation(family, outcome, input);
      write(records, family);
      if (outcome === 'reused') unindex(index, family.userId, family.familyId);
      return { outcome, family: publicFamily(family) };
    },

    async getRefreshFamily(familyId) {
      open();
      const family = read(records, familyId);
      return family === undefined ? null : publicFamily(family);
    },

    async getRefreshFamilyToRotate(familyId) {
      open();
      const family = read(records, familyId);
      return family === undefined ? null : familyToRotate(family);
    },

    async revokeRefreshFamily(familyId) {
      open();
      const family = read(records, familyId);
      if (family === undefined) return null;
      revoke(state, family);
      return publicFamily(family);
    },

    async revokeRefreshFamiliesOf(userId, tenantId) {
      open();
      return indexed(index, userId).flatMap(({ familyId }) => {
        const family = read(records, familyId);
        if (family === undefined) unindex(index, userId, familyId);
        if (family === undefined || (tenantId !== undefined && family.tenantId !== tenantId)) {
          return [];
        }
        return revoke(state, family) ? [publicFamily(family)] : [];
      });
    },

    async listRefreshFamilies(userId) {
      open();
      const now = nowSeconds();
      return indexed(index, userId).flatMap(({ familyId }) => {
        const family = read(records, familyId);
        if (family === undefined) unindex(index, userId, familyId);
        return family !== undefined && isLiveFamily(family, now) ? [publicFamily(family)] : [];
      });
    },
  };
}
