/**
 * What both backends of the browser sessions slice share
 * (`memory-browser-sessions.ts`, `redis-browser-sessions.ts`): the order a
 * user's sessions are listed in, a record read back checked, copies.
 */
import { GatewayError } from '../errors.js';
import type { BrowserSessionRecord } from './browser-sessions.js';

/** Newest first; sessions begun in one second by id, so the order is total. */
export function newestFirst(a: BrowserSessionRecord, b: BrowserSessionRecord): number {
  if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt;
  return a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0;
}

/** A copy, so no caller shares an object with the store (Redis gives that for free). */
export function copySession(session: BrowserSessionRecord): BrowserSessionRecord {
  return { ...session, ...(session.idp === undefined ? {} : { idp: { ...session.idp } }) };
}

/** A random id met twice: never expected, so not an answer a caller could act on. */
export function sessionIdTaken(): GatewayError {
  return new GatewayError('internal_error', 'The browser session id is already in use.');
}

/** Whether the record has ended by `nowSeconds` (it vanishes at its absolute end). */
export const sessionEnded = (session: BrowserSessionRecord, nowSeconds: number): boolean =>
  session.absoluteExpiresAt <= nowSeconds;

const STRINGS = ['sessionId', 'digest', 'userId', 'email', 'tenantId', 'role', 'userAgent', 'ip'];
const NUMBERS = [
  'sessionVersion',
  'membershipGeneration',
  'createdAt',
  'lastSeenAt',
  'absoluteExpiresAt',
];

/**
 * A stored record, checked field by field: a record of another shape is an
 * unexpected reply, never a session.
 * @throws GatewayError `internal_error`
 */
export function sessionFromJson(json: string): BrowserSessionRecord {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    parsed = undefined;
  }
  const record = parsed as Record<string, unknown> | undefined;
  const ok =
    typeof record === 'object' &&
    record !== null &&
    STRINGS.every((key) => typeof record[key] === 'string') &&
    NUMBERS.every((key) => typeof record[key] === 'number') &&
    (record.idp === undefined || typeof record.idp === 'object');
  if (!ok) throw new GatewayError('internal_error', 'The store gave an unexpected reply.');
  return parsed as BrowserSessionRecord;
}
