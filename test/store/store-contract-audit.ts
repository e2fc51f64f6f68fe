/**
 * The store contract for the audit streams: appended JSON comes back as it
 * went in, oldest first, from a point in time; streams stay bounded by count
 * and by age; a follower hears what is appended after it starts. Registered
 * by `describeStoreContract`.
 */
import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/store/audit-log.js';
import type { Store } from '../../src/store/types.js';
import { sleep, waitUntil } from './store-fixtures.js';

const ONE_NODE = 100;

/** @param current the store of the running test (a fresh one each). */
export function describeAuditContract(current: () => Store): void {
  describe('audit streams', () => {
    const spec = { maxEventsPerStream: 1000 };

    it('keeps each stream apart, oldest first, the JSON as given, and lists the streams', async () => {
      const log = current().auditLog(spec);
      expect(await log.streams()).toEqual([]);
      const events = ['{"n":1}', '{"n":2,"s":"é \\"q\\""}', '{"n":3}'];
      for (const e of events) await log.append('tenant:acme', e);
      await log.append('users', '{"u":1}');
      const read = await log.read('tenant:acme', 0);
      expect(read.map((e) => e.event)).toEqual(events);
      expect(read.map((e) => e.id)).toEqual([...read.map((e) => e.id)].sort(byId));
      expect(read[0]?.id).toMatch(/^\d{13}-\d+$/);
      expect((await log.read('users', 0)).map((e) => e.event)).toEqual(['{"u":1}']);
      expect(await log.read('tenant:nobody', 0)).toEqual([]);
      expect(await log.streams()).toEqual(['tenant:acme', 'users']);
    });

    it('reads from a point in time', async () => {
      const log = current().auditLog(spec);
      await log.append('users', '"before"');
      await sleep(5);
      const since = Date.now();
      await log.append('users', '"after"');
      expect((await log.read('users', since)).map((e) => e.event)).toEqual(['"after"']);
    });

    it('keeps about the last maxEventsPerStream entries of a stream', async () => {
      const log = current().auditLog({ maxEventsPerStream: ONE_NODE });
      for (let i = 0; i < 3.5 * ONE_NODE; i++) await log.append('tenant:busy', String(i));
      await log.append('tenant:quiet', '"kept"');
      const kept = await log.read('tenant:busy', 0);
      // Redis trims whole nodes (100 entries by default): at most one more.
      expect(kept.length).toBeGreaterThanOrEqual(ONE_NODE);
      expect(kept.length).toBeLessThanOrEqual(2 * ONE_NODE);
      expect(kept.at(-1)?.event).toBe(String(3.5 * ONE_NODE - 1));
      expect(kept.map((e) => Number(e.event))).toEqual(
        Array.from({ length: kept.length }, (_, i) => 3.5 * ONE_NODE - kept.length + i),
      );
      expect((await log.read('tenant:quiet', 0)).map((e) => e.event)).toEqual(['"kept"']);
    });

    it('drops entries older than maxAgeSeconds at the next append', async () => {
      const log = current().auditLog({ maxEventsPerStream: 1000, maxAgeSeconds: 1 });
      await log.append('users', '"old"');
      await sleep(1100);
      await log.append('users', '"new"');
      expect((await log.read('users', 0)).map((e) => e.event)).toEqual(['"new"']);
    });

    it('follows what is appended after the given entry, until aborted', async () => {
      const store = current();
      const log = store.auditLog(spec);
      await log.append('tenant:a', '"seen before"');
      const [last] = await log.read('tenant:a', 0);
      const heard: [string, AuditEntry][] = [];
      const stop = new AbortController();
      const following = log.follow(
        [
          { stream: 'tenant:a', after: last?.id ?? '0-0' },
          { stream: 'users', after: '0-0' },
        ],
        (stream, entry) => heard.push([stream, entry]),
        stop.signal,
      );
      await sleep(50);
      await log.append('tenant:a', '"one"');
      await log.append('tenant:other', '"not followed"');
      await log.append('users', '"two"');
      await waitUntil(() => heard.length >= 2);
      stop.abort();
      await following;
      expect(heard.map(([s, e]) => [s, e.event])).toEqual(
        expect.arrayContaining([
          ['tenant:a', '"one"'],
          ['users', '"two"'],
        ]),
      );
      expect(heard).toHaveLength(2);
    });
  });
}

function byId(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am - bm || as - bs;
}
