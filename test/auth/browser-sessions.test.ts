/**
 * The browser sessions service (issue 44) on the memory store, with the real
 * session guard and audit recorder: a session begins for a member only, its
 * cookie is recognised exactly (any other spelling refused before any
 * lookup, one character off refused), it ends by sign-out and by
 * everything that ends a token, by its idle and absolute timeouts (an
 * injected clock), takes the role's scopes of the live config, and a steady
 * stream of requests makes no store call.
 */
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAuditRecorder } from '../../src/audit/recorder.js';
import type { RoleScopes } from '../../src/auth/accounts.js';
import { disabledHash } from '../../src/auth/revocation/disabled.js';
import { createSessionGuard, type SessionGuard } from '../../src/auth/revocation/sessions.js';
import type {
  BrowserSessions,
  SessionPrincipal,
} from '../../src/auth/sessions/browser-sessions.js';
import { createBrowserSessions } from '../../src/auth/sessions/session-service.js';
import { timeStore } from '../../src/ops/timed-store.js';
import { createMemoryStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import { lineSink, type Line } from '../support/log-sink.js';
import { createStoredUser } from '../support/store-users.js';

const IDLE = 3600;
const ABSOLUTE = 86_400;
const START_MS = Date.now();

/** One instance's view: its guard and service over a shared store, on a clock the test moves. */
interface Instance {
  guard: SessionGuard;
  sessions: BrowserSessions;
}

interface World {
  store: Store;
  /** Store calls made through `a` (operation names), counted by the timed store. */
  calls: string[];
  roles: RoleScopes;
  clock: { ms: number };
  log: Line[];
  a: Instance;
  b: Instance;
  alice: string;
  bob: string;
}

let w: World;

function instance(
  world: Omit<World, 'a' | 'b'>,
  store: Store,
  logTo: NodeJS.WritableStream,
): Instance {
  const guard = createSessionGuard(store, { clockSkewSeconds: 30 });
  const log = pino({ level: 'info' }, logTo);
  const sessions = createBrowserSessions({
    store,
    guard,
    roleScopes: world.roles,
    config: { idleTimeoutSeconds: IDLE, absoluteTimeoutSeconds: ABSOLUTE },
    tokens: { issuer: 'https://gw.example', audience: 'api', clockSkewSeconds: 30 },
    audit: createAuditRecorder({ streams: store.auditLog({ maxEventsPerStream: 1000 }), log }),
    log,
    clock: () => world.clock.ms,
  });
  return { guard, sessions };
}

beforeEach(async () => {
  const store = createMemoryStore();
  const now = Math.floor(START_MS / 1000);
  await createStoredUser(store, {
    id: 'u-alice',
    email: 'alice@example.com',
    tenantId: 'p-a',
    now,
  });
  await createStoredUser(store, { id: 'u-bob', email: 'bob@example.com', tenantId: 'p-b', now });
  await store.tenants.upsertTenant(
    { tenantId: 'acme', type: 'orgtenant', name: 'Acme', cloudRegion: 'x', createdBy: 'x' },
    now,
  );
  await store.memberships.addMember('acme', 'u-alice', 'admin');
  await store.memberships.addMember('acme', 'u-bob', 'member');
  const calls: string[] = [];
  const sink = lineSink();
  const base = {
    store,
    calls,
    roles: { current: { admin: ['orders:write', 'orders:read'], member: ['orders:read'] } },
    clock: { ms: START_MS },
    log: sink.lines,
    alice: 'u-alice',
    bob: 'u-bob',
  };
  const counted = timeStore(store, (operation) => calls.push(operation));
  w = { ...base, a: instance(base, counted, sink.stream), b: instance(base, store, sink.stream) };
});

afterEach(async () => {
  await w.a.guard.close();
  await w.b.guard.close();
  await w.store.close();
});

const start = (userId = w.alice, tenantId = 'acme', over: Partial<{ userAgent: string }> = {}) =>
  w.a.sessions.start({ userId, tenantId, userAgent: 'Firefox/140', ip: '203.0.113.7', ...over });

/** The principal, awaited when it is not answered at once. */
const principal = (cookie: string, on: Instance = w.a): Promise<SessionPrincipal> =>
  Promise.resolve().then(() => on.sessions.principal(cookie));

/** The refusal's code and detail (why, for the log), or 'accepted'. */
async function refusal(cookie: string, on: Instance = w.a): Promise<string> {
  try {
    await principal(cookie, on);
    return 'accepted';
  } catch (err) {
    const { code, detail } = err as { code: string; detail?: string };
    return `${code}:${detail ?? ''}`;
  }
}

/** Lets background store calls (a last use written) settle, so the timed store has counted them. */
const settled = () => new Promise((resolve) => setTimeout(resolve, 10));

const advance = (seconds: number) => {
  w.clock.ms += seconds * 1000;
};

async function auditEvents(): Promise<Record<string, unknown>[]> {
  const entries = await w.store.auditLog({ maxEventsPerStream: 1000 }).read('tenant:acme', 0);
  return entries.map((e) => JSON.parse(e.event) as Record<string, unknown>);
}

describe('a session begins for a member of the tenant', () => {
  it('holds the sign-in as a record, the secret only as a digest, and recognises the cookie', async () => {
    const { cookieValue, session } = await start();
    expect(cookieValue).toMatch(/^ses_[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    const secret = cookieValue.split('.')[1] as string;
    const now = Math.floor(START_MS / 1000);
    expect(session).toMatchObject({
      userId: w.alice,
      email: 'alice@example.com',
      tenantId: 'acme',
      role: 'admin',
      sessionVersion: 0,
      createdAt: now,
      lastSeenAt: now,
      absoluteExpiresAt: now + ABSOLUTE,
      userAgent: 'Firefox/140',
      ip: '203.0.113.7',
    });
    expect(cookieValue.startsWith(`${session.sessionId}.`)).toBe(true);
    const stored = await w.store.browserSessions.getBrowserSession(session.sessionId);
    expect(stored).toEqual(session);
    expect(JSON.stringify(stored)).not.toContain(secret);
    const p = await principal(cookieValue);
    expect(p).toMatchObject({
      kind: 'session',
      userId: w.alice,
      email: 'alice@example.com',
      tenantId: 'acme',
      tenantType: 'orgtenant',
      scopes: ['orders:read', 'orders:write'],
      sessionId: session.sessionId,
    });
    expect(p.claims).toMatchObject({ jti: session.sessionId, exp: now + ABSOLUTE, sub: w.alice });
  });

  it('audits session_started and session_ended with ids only, never the cookie or its secret', async () => {
    const { cookieValue, session } = await start();
    await w.a.sessions.end(session.sessionId, 'sign_out', w.alice);
    const events = await auditEvents();
    expect(events.map((e) => e.event)).toEqual(['session_started', 'session_ended']);
    expect(events[0]).toMatchObject({
      source: 'api',
      actor: 'alice@example.com',
      client_ip: '203.0.113.7',
      session_id: session.sessionId,
      user_id: w.alice,
    });
    expect(events[1]).toMatchObject({ reason: 'sign_out', session_id: session.sessionId });
    const secret = cookieValue.split('.')[1] as string;
    for (const text of [JSON.stringify(events), JSON.stringify(w.log)]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(session.digest);
    }
  });

  it('keeps 256 characters of the user agent', async () => {
    const { session } = await start(w.alice, 'acme', { userAgent: 'x'.repeat(1000) });
    expect(session.userAgent).toBe('x'.repeat(256));
  });

  it('is refused, as a token grant is, for a tenant that does not exist or a non-member; a disabled user is refused', async () => {
    await expect(start(w.alice, 'globex')).rejects.toMatchObject({ code: 'tenant_access_denied' });
    await expect(start(w.alice, 'p-b')).rejects.toMatchObject({ code: 'tenant_access_denied' });
    await expect(start('u-nobody')).rejects.toMatchObject({ code: 'invalid_credentials' });
    const user = await w.store.users.getUser(w.bob);
    await w.store.users.setPasswordHash(w.bob, disabledHash(user?.passwordHash ?? ''));
    await expect(start(w.bob)).rejects.toMatchObject({ code: 'invalid_credentials' });
    expect(await w.store.browserSessions.listBrowserSessions(w.bob)).toEqual([]);
  });
});

describe('a cookie value is recognised exactly', () => {
  /** `value` with the character at `at` replaced by another of the alphabet. */
  const flipped = (value: string, at: number) =>
    `${value.slice(0, at)}${value[at] === 'A' ? 'B' : 'A'}${value.slice(at + 1)}`;

  it('refuses every other shape before any lookup', async () => {
    const { cookieValue } = await start();
    const [id, secret] = cookieValue.split('.') as [string, string];
    w.calls.length = 0;
    const shapes = [
      '',
      'garbage',
      id,
      `${id}.`,
      `.${secret}`,
      `${cookieValue} `,
      ` ${cookieValue}`,
      `${cookieValue}=`,
      `${cookieValue}A`,
      cookieValue.slice(0, -1),
      `${id}.${secret.slice(0, 42)}`,
      `${id.slice(0, -1)}.${secret}`,
      `SES_${cookieValue.slice(4)}`,
      `${id}..${secret}`,
      `${id}.${secret.slice(0, 20)}+${secret.slice(21)}`,
      `"${cookieValue}"`,
      encodeURIComponent(`${id}.${secret}/`),
    ];
    for (const shape of shapes) expect(await refusal(shape), shape).toBe('invalid_token:malformed');
    expect(w.calls).toEqual([]);
    expect(await refusal(cookieValue)).toBe('accepted');
  });

  it('refuses a value one character off in the id as unknown, in the secret as a wrong secret', async () => {
    const { cookieValue } = await start();
    const dot = cookieValue.indexOf('.');
    for (const at of [4, dot - 1]) {
      expect(await refusal(flipped(cookieValue, at))).toBe('invalid_token:session_unknown');
    }
    for (const at of [dot + 1, dot + 20, cookieValue.length - 1]) {
      expect(await refusal(flipped(cookieValue, at))).toBe('invalid_token:session_secret');
    }
    // The right value still works after the wrong ones, and a wrong one after it.
    expect(await refusal(cookieValue)).toBe('accepted');
    expect(await refusal(flipped(cookieValue, dot + 5))).toBe('invalid_token:session_secret');
  });

  it('refuses the secret of another session under this id', async () => {
    const one = await start();
    const two = await start(w.bob);
    const [id] = one.cookieValue.split('.');
    const [, secret] = two.cookieValue.split('.');
    expect(await refusal(`${id}.${secret}`)).toBe('invalid_token:session_secret');
  });

  it('reads a session this instance never saw from the store', async () => {
    const { cookieValue } = await start();
    expect(await principal(cookieValue, w.b)).toMatchObject({ userId: w.alice });
  });
});

describe('the steady state', () => {
  it('answers at once, without a promise and without a store call', async () => {
    const { cookieValue } = await start();
    await principal(cookieValue);
    w.calls.length = 0;
    // 50 s of requests: within the minute a last use waits before it is written.
    for (let i = 0; i < 100; i++) {
      advance(0.5);
      const answer = w.a.sessions.principal(cookieValue);
      expect(answer).not.toBeInstanceOf(Promise);
    }
    await settled();
    expect(w.calls).toEqual([]);
  });

  it('writes the last use at most once a minute, in the background', async () => {
    const { cookieValue, session } = await start();
    await principal(cookieValue);
    w.calls.length = 0;
    for (let i = 0; i < 130; i++) {
      advance(1);
      w.a.sessions.principal(cookieValue);
    }
    await settled();
    expect(w.calls).toEqual(['touchBrowserSession', 'touchBrowserSession']);
    const stored = await w.store.browserSessions.getBrowserSession(session.sessionId);
    expect(stored?.lastSeenAt).toBe(session.createdAt + 120);
  });

  it('a last use the store does not take changes no verdict, and is logged without the secret', async () => {
    const failing: Store = {
      ...w.store,
      browserSessions: {
        ...w.store.browserSessions,
        touchBrowserSession: () => Promise.reject(new Error('the store is down')),
      },
    };
    const sink = lineSink();
    const c = instance(w, failing, sink.stream);
    try {
      const { cookieValue, session } = await start();
      advance(61);
      expect(await refusal(cookieValue, c)).toBe('accepted');
      await settled();
      expect(await refusal(cookieValue, c)).toBe('accepted');
      const warned = sink.lines.filter((l) => String(l.msg).includes('last use not written'));
      expect(warned).toMatchObject([{ sessionId: session.sessionId }]);
      expect(JSON.stringify(sink.lines)).not.toContain(cookieValue.split('.')[1]);
    } finally {
      await c.guard.close();
    }
  });

  it("takes the role's scopes of the live config (a reload)", async () => {
    const { cookieValue } = await start(w.bob);
    expect((await principal(cookieValue)).scopes).toEqual(['orders:read']);
    w.roles.current = { admin: ['orders:write'], member: [] };
    expect((await principal(cookieValue)).scopes).toEqual([]);
    w.roles.current = { admin: [], member: ['reports:read', 'orders:read', 'reports:read'] };
    expect((await principal(cookieValue)).scopes).toEqual(['orders:read', 'reports:read']);
    expect((await principal(cookieValue)).claims.scope).toBe('orders:read reports:read');
  });
});

describe('timeouts', () => {
  it('ends a session unused for the idle timeout, and not one used within it', async () => {
    const { cookieValue, session } = await start();
    advance(IDLE - 1);
    expect(await refusal(cookieValue)).toBe('accepted');
    advance(IDLE - 1);
    expect(await refusal(cookieValue)).toBe('accepted');
    advance(IDLE);
    expect(await refusal(cookieValue)).toBe('invalid_token:session_idle');
    expect(await w.store.browserSessions.getBrowserSession(session.sessionId)).toBeNull();
    expect(await refusal(cookieValue)).toBe('invalid_token:session_unknown');
    const ended = (await auditEvents()).filter((e) => e.event === 'session_ended');
    expect(ended).toMatchObject([{ reason: 'idle_timeout', session_id: session.sessionId }]);
  });

  it('reads the record again before refusing as idle: another instance may have seen a use', async () => {
    const { cookieValue, session } = await start();
    await principal(cookieValue);
    advance(IDLE - 10);
    // Instance b sees a use and writes it (it is a minute past its last write).
    expect(await refusal(cookieValue, w.b)).toBe('accepted');
    advance(20);
    expect(await refusal(cookieValue)).toBe('accepted');
    const stored = await w.store.browserSessions.getBrowserSession(session.sessionId);
    expect(stored?.lastSeenAt).toBe(session.createdAt + IDLE - 10);
    advance(IDLE - 30);
    expect(await refusal(cookieValue)).toBe('accepted');
  });

  it('ends a session at its absolute end, however much it is used', async () => {
    const { cookieValue } = await start();
    for (let t = 0; t < ABSOLUTE - IDLE; t += IDLE - 60) {
      advance(IDLE - 60);
      expect(await refusal(cookieValue)).toBe('accepted');
    }
    advance(ABSOLUTE);
    expect(await refusal(cookieValue)).toBe('invalid_token:session_expired');
  });
});

describe('a session ends', () => {
  it('by sign-out: refused on this instance and on another that had it cached, listed no more', async () => {
    const { cookieValue, session } = await start();
    const other = await start();
    await principal(cookieValue, w.b);
    expect(await w.a.sessions.list(w.alice)).toHaveLength(2);
    expect(await w.a.sessions.end(session.sessionId, 'sign_out', w.alice)).toBe(true);
    // Gone here; deny-listed where it was known (its record removed after the deny-list entry).
    expect(await refusal(cookieValue)).toBe('invalid_token:session_unknown');
    expect(await refusal(cookieValue, w.b)).toBe('invalid_token:revoked');
    expect((await w.a.sessions.list(w.alice)).map((s) => s.sessionId)).toEqual([
      other.session.sessionId,
    ]);
    expect(await w.a.sessions.end(session.sessionId, 'sign_out', w.alice)).toBe(false);
    expect(await refusal(other.cookieValue)).toBe('accepted');
  });

  it("never by another user's request; by the operator, with the actor given", async () => {
    const { cookieValue, session } = await start();
    expect(await w.a.sessions.end(session.sessionId, 'ended_by_user', w.bob)).toBe(false);
    expect(await refusal(cookieValue)).toBe('accepted');
    const operator = { source: 'cli', actor: 'cli:ops' } as const;
    expect(
      await w.a.sessions.end(session.sessionId, 'ended_by_operator', undefined, operator),
    ).toBe(true);
    expect(await refusal(cookieValue)).toBe('invalid_token:session_unknown');
    const ended = (await auditEvents()).find((e) => e.event === 'session_ended');
    expect(ended).toMatchObject({ source: 'cli', actor: 'cli:ops', reason: 'ended_by_operator' });
  });

  it.each([
    [
      'a password change',
      (s: Store) => s.users.setPasswordHash('u-alice', '$2b$04$new'),
      'session_ended',
    ],
    [
      'the user disabled',
      (s: Store) => s.users.setPasswordHash('u-alice', disabledHash('$2b$04$x')),
      'session_ended',
    ],
    ['the user removed', (s: Store) => s.users.removeUser('u-alice'), 'membership_ended'],
    [
      'the member removed',
      (s: Store) => s.memberships.removeMember('acme', 'u-alice'),
      'membership_ended',
    ],
    [
      'the role changed',
      (s: Store) => s.memberships.setMemberRole('acme', 'u-alice', 'member'),
      'membership_ended',
    ],
    ['the tenant removed', (s: Store) => s.tenants.removeOrgTenant('acme'), 'membership_ended'],
  ])('by %s, on every instance', async (_, change, reason) => {
    const { cookieValue } = await start();
    const bobs = await start(w.bob);
    expect(await refusal(cookieValue)).toBe('accepted');
    expect(await refusal(cookieValue, w.b)).toBe('accepted');
    await change(w.store);
    for (const on of [w.a, w.b]) {
      expect([`invalid_token:${reason}`, 'invalid_token:unknown_user']).toContain(
        await refusal(cookieValue, on),
      );
    }
    if (!_.includes('tenant') && !_.includes('role'))
      expect(await refusal(bobs.cookieValue)).toBe('accepted');
  });

  it('by the tenant removed, on an instance that never saw the session', async () => {
    const { cookieValue } = await start();
    await w.store.tenants.removeOrgTenant('acme');
    expect(await refusal(cookieValue, w.b)).toBe('invalid_token:membership_ended');
  });

  it('from an IdP: only the sessions begun at that issuer (and sid, when given)', async () => {
    const idp = (sid?: string) => ({
      issuer: 'https://idp.acme.example',
      subject: 'alice-at-idp',
      ...(sid === undefined ? {} : { sid }),
    });
    const base = { userId: w.alice, tenantId: 'acme', userAgent: 'x', ip: '198.51.100.1' };
    const one = await w.a.sessions.start({ ...base, idp: idp('sid-1') });
    const two = await w.a.sessions.start({ ...base, idp: idp('sid-2') });
    const other = await w.a.sessions.start({
      ...base,
      idp: { issuer: 'https://idp.globex.example', subject: 'a', sid: 'sid-1' },
    });
    const password = await start();
    expect(await w.a.sessions.endFromIdp(w.alice, 'https://idp.acme.example', 'sid-1')).toBe(1);
    expect(await refusal(one.cookieValue)).toBe('invalid_token:session_unknown');
    expect(await refusal(two.cookieValue)).toBe('accepted');
    expect(await w.a.sessions.endFromIdp(w.alice, 'https://idp.acme.example')).toBe(1);
    expect(await refusal(two.cookieValue)).toBe('invalid_token:session_unknown');
    expect(await refusal(other.cookieValue)).toBe('accepted');
    expect(await refusal(password.cookieValue)).toBe('accepted');
    const reasons = (await auditEvents()).filter((e) => e.event === 'session_ended');
    expect(reasons.map((e) => e.reason)).toEqual(['backchannel_logout', 'backchannel_logout']);
  });
});
