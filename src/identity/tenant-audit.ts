/**
 * A tenant's audit events for its admins (the console's audit page, or a
 * script): the tenant's own stream only — never another tenant's, never the
 * user-level stream — newest first, filtered by type and time, a page at a
 * time. A page's cursor is the id of its oldest entry; the next page is what
 * is older. A read: it changes nothing and records no event.
 */
import { compareEntryIds, tenantStream, type AuditLog } from '../store/audit-log.js';

export interface AuditQuery {
  /** An event kind (`member_removed`, …); undefined: any. */
  type?: string | undefined;
  /** Unix seconds, inclusive; undefined: from the start of what is kept. */
  since?: number | undefined;
  /** Unix seconds, exclusive; undefined: up to now. */
  until?: number | undefined;
  /** The cursor of the page before: only entries older than it. */
  before?: string | undefined;
  limit: number;
}

export interface AuditPage {
  /** The events as stored, parsed, newest first. */
  events: Record<string, unknown>[];
  /** The cursor of the next (older) page; undefined when there is none. */
  next: string | undefined;
  /** The kinds present in the stream within `since`/`until`, sorted: a filter's choices. */
  types: string[];
}

export async function readTenantAudit(
  log: AuditLog,
  tenantId: string,
  query: AuditQuery,
): Promise<AuditPage> {
  const sinceMs = query.since === undefined ? 0 : query.since * 1000;
  const untilMs = query.until === undefined ? Number.POSITIVE_INFINITY : query.until * 1000;
  const entries = (await log.read(tenantStream(tenantId), sinceMs))
    .filter((entry) => Number(entry.id.split('-')[0]) < untilMs)
    .map((entry) => ({ id: entry.id, event: parse(entry.event) }))
    .filter(
      (entry): entry is { id: string; event: Record<string, unknown> } => entry.event !== undefined,
    );
  const types = [...new Set(entries.map((e) => String(e.event['event'])))].sort();
  const matching = entries
    .filter((e) => query.type === undefined || e.event['event'] === query.type)
    .filter((e) => query.before === undefined || compareEntryIds(e.id, query.before) < 0)
    .sort((a, b) => compareEntryIds(b.id, a.id));
  const page = matching.slice(0, query.limit);
  const last = page.at(-1);
  return {
    events: page.map((e) => e.event),
    next: matching.length > query.limit && last !== undefined ? last.id : undefined,
    types,
  };
}

function parse(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
