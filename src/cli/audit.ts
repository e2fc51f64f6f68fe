/**
 * `audit tail`: prints the audit events kept in the store, one JSON object a
 * line, oldest first; with `--follow`, then each new one until SIGINT. It
 * reads the store's streams directly, so it needs `store.redis`: the
 * in-memory store's streams live inside the serving process.
 */
import { eventMicros } from '../audit/events.js';
import { terminalSafe } from '../text/line-safe.js';
import type { LoadedConfig } from '../config/index.js';
import {
  compareEntryIds,
  tenantStream,
  USER_STREAM,
  type AuditEntry,
  type AuditLog,
} from '../store/audit-log.js';
import type { Store } from '../store/types.js';
import { cliIo } from './io.js';
import { UsageError } from './usage-error.js';

export interface TailOptions {
  tenant?: string;
  since?: string;
  follow?: boolean;
}

export async function auditTail(loaded: LoadedConfig, options: TailOptions): Promise<void> {
  const { config } = loaded;
  if (config.store.redis === undefined) {
    throw new UsageError(
      'audit tail needs store.redis: the in-memory store keeps its audit streams inside the serving process (its events are in that process’s log). Point --config (or GATEWAY_CONFIG) at a config with store.redis.',
    );
  }
  const sinceMs = options.since === undefined ? 0 : parseSince(options.since, Date.now());
  // Here, not at the top: every command's start would load ioredis (~0.2 s of CPU).
  const { createRedisStore } = await import('../store/redis-store.js');
  const store = await createRedisStore(config.store.redis);
  try {
    // Reading needs no bounds; the spec only matters to appends.
    const log = store.auditLog({ maxEventsPerStream: config.audit.maxEventsPerStream });
    const streams = await streamsToTail(store, log, options.tenant);
    const lastIds = await printHistory(log, streams, sinceMs);
    if (options.follow === true) {
      const from = streams.map((stream) => ({
        stream,
        after: lastIds.get(stream) ?? (sinceMs > 0 ? `${sinceMs}-0` : '0-0'),
      }));
      await followUntilInterrupted(log, from);
    }
  } finally {
    await store.close();
  }
}

/**
 * One tenant's stream, or every stream there is and the user-level one. A
 * tenant unknown to the directory is refused unless it has events (those of
 * a removed tenant stay readable), so a mistyped id is not mistaken for a
 * quiet tenant.
 */
async function streamsToTail(
  store: Store,
  log: AuditLog,
  tenantId: string | undefined,
): Promise<string[]> {
  if (tenantId === undefined) return [...new Set([...(await log.streams()), USER_STREAM])];
  const stream = tenantStream(tenantId);
  if (
    (await store.tenants.getTenant(tenantId)) === null &&
    (await log.read(stream, 0)).length === 0
  )
    throw new UsageError(`no tenant ${tenantId}, and no audit events for it`);
  return [stream];
}

/** Prints the streams' entries since `sinceMs`, merged by time; returns each stream's last id. */
async function printHistory(
  log: AuditLog,
  streams: string[],
  sinceMs: number,
): Promise<Map<string, string>> {
  const read = await Promise.all(streams.map((s) => log.read(s, sinceMs)));
  const lastIds = new Map<string, string>();
  const merged: AuditEntry[] = [];
  read.forEach((entries, i) => {
    const last = entries.at(-1);
    if (last !== undefined) lastIds.set(streams[i] as string, last.id);
    merged.push(...entries);
  });
  // By the events' own time, which is what a reader compares: one command's
  // events are appended to several streams at once, so their stream ids (the
  // store's clock at each append) may come in another order.
  const times = new Map(merged.map((entry) => [entry, eventTime(entry)]));
  merged.sort(
    (a, b) => (times.get(a) as number) - (times.get(b) as number) || compareEntryIds(a.id, b.id),
  );
  for (const entry of merged) printEntry(entry);
  return lastIds;
}

/** µs since the epoch of an entry's event (its `time`), else of its append (the stream id). */
function eventTime(entry: AuditEntry): number {
  try {
    const time = eventMicros((JSON.parse(entry.event) as { time?: string }).time ?? '');
    if (!Number.isNaN(time)) return time;
  } catch {
    // Not an event of ours: by its append.
  }
  return Number(entry.id.split('-')[0]) * 1000;
}

async function followUntilInterrupted(
  log: AuditLog,
  from: { stream: string; after: string }[],
): Promise<void> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    await log.follow(from, (_stream, entry) => printEntry(entry), stop.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/**
 * One line per entry, and nothing a terminal would act on: an entry written
 * by an older gateway (or any other writer of the stream) may hold raw
 * control characters, U+2028 or U+2029; they are printed escaped.
 */
function printEntry(entry: AuditEntry): void {
  cliIo().stdout.write(`${terminalSafe(entry.event)}\n`);
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * `--since`: an ISO 8601 time (`2026-11-25T14:00:00Z`) or a duration back
 * from `now` (`90s`, `15m`, `2h`, `7d`). @returns Unix ms
 */
export function parseSince(text: string, now: number): number {
  const duration = /^(\d+)([smhd])$/.exec(text.trim());
  if (duration !== null) return now - Number(duration[1]) * (UNIT_MS[duration[2] as string] ?? 0);
  const time = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(time))
    throw new UsageError(
      '--since must be an ISO 8601 time (2026-11-25T14:00:00Z) or a duration (90s, 15m, 2h, 7d)',
    );
  return time;
}
