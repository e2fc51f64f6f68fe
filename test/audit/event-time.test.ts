/**
 * An audit event's `time`: the wall clock's millisecond, and three more
 * digits keeping one process's events in order within a millisecond — what
 * `audit tail` merges several streams by.
 */
import { describe, expect, it } from 'vitest';
import { eventMicros, eventTime } from '../../src/audit/events.js';

// Each case starts well after the one before: the module remembers the last time it gave.
const base = Date.parse('2026-11-25T14:02:11.481Z');

describe('eventTime', () => {
  it('is ISO 8601 in UTC with six decimals, the millisecond of the clock first', () => {
    const time = eventTime(base);
    expect(time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(time.slice(0, 23)).toBe(new Date(base).toISOString().slice(0, 23));
    expect(Date.parse(time)).toBe(base);
  });

  it('orders the events of one millisecond by 1 µs each, and starts again at the next', () => {
    const at = base + 1000;
    const times = [eventTime(at), eventTime(at), eventTime(at)];
    expect(times.map((t) => t.slice(-4))).toEqual(['000Z', '001Z', '002Z']);
    expect(eventTime(at + 1).slice(-4)).toBe('000Z');
  });

  it('never goes back within a millisecond, and follows a clock stepped back further', () => {
    const at = base + 2000;
    eventTime(at);
    eventTime(at);
    // Half a millisecond back (a clock slewed by NTP): still after the last one.
    expect(eventMicros(eventTime(at - 0.5))).toBe(at * 1000 + 2);
    // A second back: the clock, not a time made up.
    expect(eventTime(at - 1000)).toBe(new Date(at - 1000).toISOString().replace('Z', '000Z'));
  });
});

describe('eventMicros', () => {
  it('reads six decimals and the three of earlier events', () => {
    expect(eventMicros('2026-11-25T14:02:11.481007Z')).toBe(
      Date.parse('2026-11-25T14:02:11.481Z') * 1000 + 7,
    );
    expect(eventMicros('2026-11-25T14:02:11.481Z')).toBe(
      Date.parse('2026-11-25T14:02:11.481Z') * 1000,
    );
    expect(eventMicros('not a time')).toBeNaN();
  });
});
