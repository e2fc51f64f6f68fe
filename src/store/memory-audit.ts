/**
 * The audit streams of the in-memory store: a bounded list per stream, so the
 * embedded default keeps the last events of its own process the way Redis
 * keeps everyone's. Trimming here is exact; Redis's is approximate.
 */
import { compareEntryIds, type AuditEntry, type AuditLog, type AuditLogSpec } from './audit-log.js';

/**
 * The streams of one store. Each `auditLog(spec)` reads and writes the same
 * streams; the spec bounds that log's appends.
 * @param ensureOpen throws `unavailable` once the store is closed
 */
export function memoryAuditLogs(ensureOpen: () => void): (spec: AuditLogSpec) => AuditLog {
  const streams = new Map<string, AuditEntry[]>();
  const followers = new Set<(stream: string, entry: AuditEntry) => void>();
  let lastMs = 0;
  let lastSeq = 0;

  /** Ids as Redis makes them: the clock, and a sequence within one millisecond. */
  function nextId(): string {
    const now = Date.now();
    if (now > lastMs) [lastMs, lastSeq] = [now, 0];
    else lastSeq += 1;
    return `${lastMs}-${lastSeq}`;
  }

  return (spec) => ({
    async append(stream, event) {
      ensureOpen();
      const entries = streams.get(stream) ?? [];
      const entry = { id: nextId(), event };
      entries.push(entry);
      const oldest = spec.maxAgeSeconds === undefined ? 0 : lastMs - spec.maxAgeSeconds * 1000;
      const stale = entries.findIndex((e) => idMs(e.id) >= oldest);
      entries.splice(0, Math.max(stale, entries.length - spec.maxEventsPerStream));
      streams.set(stream, entries);
      for (const follower of followers) follower(stream, entry);
    },

    async read(stream, sinceMs) {
      ensureOpen();
      return (streams.get(stream) ?? []).filter((e) => idMs(e.id) >= sinceMs);
    },

    async streams() {
      ensureOpen();
      return [...streams.keys()].sort();
    },

    async follow(from, onEntry, signal) {
      ensureOpen();
      const wanted = new Set(from.map((f) => f.stream));
      // Appends happen in this process: whatever is stored after `after` now, then each new one.
      for (const { stream, after } of from)
        for (const entry of streams.get(stream) ?? [])
          if (compareEntryIds(entry.id, after) > 0) onEntry(stream, entry);
      const follower = (stream: string, entry: AuditEntry) => {
        if (wanted.has(stream)) onEntry(stream, entry);
      };
      followers.add(follower);
      await new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        else signal.addEventListener('abort', () => resolve(), { once: true });
      });
      followers.delete(follower);
    },
  });
}

function idMs(id: string): number {
  return Number(id.slice(0, id.indexOf('-')));
}
