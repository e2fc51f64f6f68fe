/**
 * The bcrypt worker pool: hashes verify, unknown users cost a compare, work
 * for a client that has gone away is abandoned instead of queued, and logins
 * are served in the order they came. A lazy pool (a CLI command's) does no
 * work until its first hash or check.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createBcryptHasher } from '../../src/auth/passwords/passwords.js';

describe('bcrypt worker pool', () => {
  it('hashes at the configured cost and verifies', async () => {
    const hasher = await createBcryptHasher({ cost: 5, threads: 1 });
    try {
      const hash = await hasher.hash('correct-horse-1');
      expect(hash).toMatch(/^\$2b\$05\$/);
      expect(await hasher.verify('correct-horse-1', hash)).toBe(true);
      expect(await hasher.verify('wrong-horse-1', hash)).toBe(false);
      expect(await hasher.verify('correct-horse-1', undefined)).toBe(false);
      expect(hasher.needsRehash(hash)).toBe(false);
      expect(hasher.needsRehash(hash.replace('$05$', '$04$'))).toBe(true);
    } finally {
      await hasher.close();
    }
  });

  it('lazy (a CLI command): the same answers, the pool started by the first of them', async () => {
    const hasher = await createBcryptHasher({ cost: 5, threads: 1, lazy: true });
    try {
      // Unknown users and over-long passwords are compared against the dummy hash, made on demand.
      expect(await hasher.verify('correct-horse-1', undefined)).toBe(false);
      const hash = await hasher.hash('correct-horse-1');
      expect(hash).toMatch(/^\$2b\$05\$/);
      expect(await hasher.verify('correct-horse-1', hash)).toBe(true);
      expect(await hasher.verify('x'.repeat(73), undefined)).toBe(false);
      expect(hasher.queueDepth()).toBe(0);
    } finally {
      await hasher.close();
    }
  });

  it('lazy, never used: no bcrypt work (the dummy hash alone would take seconds at cost 15)', async () => {
    const started = performance.now();
    const hasher = await createBcryptHasher({ cost: 15, threads: 1, lazy: true });
    await hasher.close();
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('abandons queued compares when their client goes away, and keeps serving', async () => {
    const hasher = await createBcryptHasher({ cost: 12, threads: 1 });
    try {
      const hash = await hasher.hash('correct-horse-1');
      const gone = new AbortController();
      const queued = Array.from({ length: 4 }, () =>
        hasher.verify('correct-horse-1', hash, gone.signal),
      );
      gone.abort();
      const outcomes = await Promise.allSettled(queued);
      const abandoned = outcomes.filter(
        (o) =>
          o.status === 'rejected' && (o.reason as { code?: string }).code === 'invalid_request',
      );
      expect(abandoned.length).toBe(4);
      expect(await hasher.verify('correct-horse-1', hash)).toBe(true);
    } finally {
      await hasher.close();
    }
  });

  it('a compare whose client left just as it finished never throws out of the pool, which goes on serving', async () => {
    // The pool ends a worker whose job was dropped; a result the worker had already posted
    // then arrives for no job, and piscina raises it as an 'error' event. Unheard, that event
    // ends the process: a client cutting logins would bring the gateway down (3–5 in 1,000
    // such hang-ups, measured). Here it is told to onPoolError, and the next login is served.
    const strays: Error[] = [];
    const hasher = await createBcryptHasher({
      cost: 4,
      threads: 1,
      onPoolError: (err) => strays.push(err),
    });
    /** How long after the compare starts its client leaves: the result sometimes already posted. */
    const later: (() => Promise<unknown>)[] = [
      () => new Promise((resolve) => setImmediate(resolve)),
      () => delay(0),
      () => delay(1),
      () => delay(2),
    ];
    // Every other hang-up leaves at once (a resolved promise): measured, those are the ones that
    // raise a stray (11 in 140 on a loaded 2-core machine, against 0 in 160 for the later
    // leavers). 240 hang-ups keep the 120 immediate ones the test used to make among 600, so it
    // meets as many strays as before, and each later leaving is still tried 30 times.
    const HANG_UPS = 240;
    const pause = (i: number): Promise<unknown> =>
      i % 2 === 0 ? Promise.resolve() : (later[(i >> 1) % later.length]?.() ?? Promise.resolve());
    try {
      const hash = await hasher.hash('correct-horse-1');
      for (let i = 0; i < HANG_UPS; i++) {
        const gone = new AbortController();
        const abandoned = hasher.verify('correct-horse-1', hash, gone.signal).catch(() => false);
        await pause(i);
        gone.abort();
        await abandoned;
        expect(await hasher.verify('correct-horse-1', hash, new AbortController().signal)).toBe(
          true,
        );
      }
      console.log(`stray results told to onPoolError: ${strays.length} in ${HANG_UPS} hang-ups`);
      for (const err of strays) expect(err.message).toMatch(/^Unexpected message from Worker/);
    } finally {
      await hasher.close();
    }
    // Each hang-up ends and restarts a worker thread (~80 ms on a quiet 2-core machine, several
    // times that beside the rest of the suite): 240 of them take 20 s quiet. The limit is a hang
    // guard, not a time the test asserts.
  }, 180_000);

  it('serves compares in the order they came, also right after a client went away', async () => {
    const hasher = await createBcryptHasher({ cost: 6, threads: 1 });
    try {
      const hash = await hasher.hash('correct-horse-1');
      // A client hangs up mid-compare: the pool ends that worker and starts another.
      const gone = new AbortController();
      const abandoned = hasher.verify('correct-horse-1', hash, gone.signal);
      gone.abort();
      await expect(abandoned).rejects.toMatchObject({ code: 'invalid_request' });
      // Every login carries a signal of its own (its client may leave too).
      const finished: number[] = [];
      await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          hasher
            .verify('correct-horse-1', hash, new AbortController().signal)
            .then(() => finished.push(i)),
        ),
      );
      expect(finished).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    } finally {
      await hasher.close();
    }
  });
});
