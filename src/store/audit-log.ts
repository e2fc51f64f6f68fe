/**
 * The audit streams: an append-only, bounded list of events per stream, kept
 * where the rest of the state is (a Redis Stream per stream on Redis, a list
 * in process otherwise). The store keeps each event as the JSON text it is
 * given: what an event holds is decided by `src/audit`, not here.
 *
 * Streams are named `users` (events that concern a user rather than one
 * tenant) and `tenant:<tenantId>`. Each is one key on Redis, and every command
 * touches one key, so the streams spread over a cluster's slots.
 */

/** How an audit log is bounded. */
export interface AuditLogSpec {
  /**
   * Entries a stream keeps. On Redis trimming is approximate (`MAXLEN ~`):
   * whole internal nodes go, so a stream may hold up to one node (100 entries
   * by default) more.
   */
  maxEventsPerStream: number;
  /** Entries older than this go at the next append to their stream; undefined: only the count bounds. */
  maxAgeSeconds?: number | undefined;
}

/** One stored event. */
export interface AuditEntry {
  /** `<unix ms>-<sequence>`, increasing within a stream (a Redis Stream id). */
  id: string;
  /** The event as appended (JSON text). */
  event: string;
}

/** Where {@link AuditLog.follow} starts in one stream: after the entry `after` (`0-0`: the start). */
export interface FollowFrom {
  stream: string;
  after: string;
}

export interface AuditLog {
  /** Appends `event` (JSON text) to `stream`, trimming the stream to its bounds. */
  append(stream: string, event: string): Promise<void>;
  /** The stream's entries stored at or after `sinceMs` (Unix ms; 0: all), oldest first. */
  read(stream: string, sinceMs: number): Promise<AuditEntry[]>;
  /** The names of the streams that hold entries, sorted. */
  streams(): Promise<string[]>;
  /**
   * Calls `onEntry` with every entry appended after `from`, in order within a
   * stream, until `signal` aborts (then resolves). Rejects when the store
   * fails.
   */
  follow(
    from: FollowFrom[],
    onEntry: (stream: string, entry: AuditEntry) => void,
    signal: AbortSignal,
  ): Promise<void>;
}

/** The stream of user-level events: logins, password changes, user changes. */
export const USER_STREAM = 'users';

/** The stream of the events of one tenant. */
export function tenantStream(tenantId: string): string {
  return `tenant:${tenantId}`;
}

/** Orders stream ids (`ms-seq`), as Redis does. */
export function compareEntryIds(a: string, b: string): number {
  const [aMs = 0, aSeq = 0] = a.split('-').map(Number);
  const [bMs = 0, bSeq = 0] = b.split('-').map(Number);
  return aMs - bMs || aSeq - bSeq;
}
