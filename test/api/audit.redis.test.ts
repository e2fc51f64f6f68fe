/**
 * The audit stream end to end: a real redis-server and a real gateway. Each
 * identity action is found, exactly, in its stream (read straight from Redis)
 * and in the log, with the request id the client was answered with and the
 * client's address; no password, hash, token or credentials appear in
 * either. The streams stay bounded, and with Redis killed after an action
 * the action stands, its event is in the log and the failure is counted.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lineSink, type Line } from '../support/log-sink.js';
import {
  adminUrlOf,
  basic,
  bearer,
  makeKeysDir,
  startTestGateway,
  uniquePrefix,
  type TestGateway,
} from '../support/gateway.js';
import { startRedisServer, type TestRedisServer } from '../support/redis-server.js';

const ALICE = { email: 'alice@example.com', password: 'alice-password-1' };
const BOB = { email: 'bob@example.com', password: 'bob-password-1' };
const CAROL = { email: 'carol@example.com', password: 'carol-password-1' };
const CAROL_NEW = 'carol-password-2';
const WRONG = 'wrong-password-1';
const CLIENT_IP = '203.0.113.7';
const MAX_EVENTS = 100;

let redis: TestRedisServer;
let client: Redis;
let gw: TestGateway;
let dir: string;
let prefix: string;
const log = lineSink();
/** Every secret the tests send or receive, to be looked for in the streams and the log. */
const secrets = new Set<string>([ALICE.password, BOB.password, CAROL.password, CAROL_NEW, WRONG]);
let killOn: ((line: Line) => boolean) | undefined;

beforeAll(async () => {
  redis = await startRedisServer();
  client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  // Killed on purpose below: its reconnect errors are expected.
  client.on('error', () => {});
  const keys = await makeKeysDir();
  dir = keys.dir;
  const seed = join(mkdtempSync(join(tmpdir(), 'tg-seed-')), 'seed.yaml');
  writeFileSync(
    seed,
    `users:
  - { email: ${ALICE.email}, password: "${ALICE.password}" }
  - { email: ${BOB.email}, password: "${BOB.password}" }
tenants:
  - { tenant_id: acme, name: Acme, cloud_region: eu-west-1, created_by: ${ALICE.email}, members: [${ALICE.email}, ${BOB.email}] }
`,
  );
  prefix = uniquePrefix();
  // Kills Redis from inside the logger, right after a chosen audit line and before its stream write.
  const pid = Number(/process_id:(\d+)/.exec(await client.info('server'))?.[1]);
  const write = log.stream.write.bind(log.stream);
  log.stream.write = ((chunk: Buffer, ...rest: never[]) => {
    const line = JSON.parse(chunk.toString('utf8')) as Line;
    if (killOn?.(line)) process.kill(pid, 'SIGKILL');
    return write(chunk, ...rest);
  }) as typeof log.stream.write;
  gw = await startTestGateway(
    {
      store: { redis: { url: redis.url, keyPrefix: prefix } },
      seed,
      tokens: { keys: keys.dir, ttlSeconds: 600 },
      passwords: { bcryptCost: 4 },
      signup: { enabled: true },
      trustedProxies: ['127.0.0.1/32'],
      limits: { login: { perEmail: 3, perIp: 1000, windowSeconds: 60 } },
      audit: { maxEventsPerStream: MAX_EVENTS },
      admin: {}, // the failure counter is read from the admin listener's /metrics
    },
    { logTo: log.stream },
  );
});

afterAll(async () => {
  await gw?.close();
  client?.disconnect();
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A request from CLIENT_IP (through a trusted proxy); returns the response and its request id. */
async function call(path: string, init: RequestInit = {}) {
  const res = await fetch(`${gw.url}${path}`, {
    ...init,
    headers: { 'x-forwarded-for': CLIENT_IP, ...init.headers },
  });
  const body = res.status === 204 ? undefined : ((await res.json()) as Record<string, unknown>);
  const requestId = res.headers.get('x-request-id') as string;
  expect(requestId).toBeTruthy();
  return { status: res.status, body, requestId };
}

async function streamEvents(stream: string): Promise<Record<string, unknown>[]> {
  const entries = await client.xrange(`${prefix}audit:${stream}`, '-', '+');
  return entries.map(([, fields]) => {
    expect(fields[0]).toBe('event');
    return JSON.parse(fields[1] as string) as Record<string, unknown>;
  });
}

const loggedEvents = () => log.lines.filter((l) => l['msg'] === 'audit').map((l) => l['audit']);

/** The one event of `kind` that request `requestId` caused, in `stream` and in the log, equals `expected`. */
async function expectRecorded(stream: string, expected: Record<string, unknown>) {
  const mine = (e: unknown) =>
    (e as Record<string, unknown>)['request_id'] === expected['request_id'] &&
    (e as Record<string, unknown>)['event'] === expected['event'];
  const exact = {
    time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/),
    ...expected,
  };
  expect((await streamEvents(stream)).filter(mine)).toEqual([exact]);
  expect(loggedEvents().filter(mine)).toEqual([exact]);
}

const api = { source: 'api', client_ip: CLIENT_IP };

describe('audit events of the identity endpoints', () => {
  let alice: { id: string; token: string; jti: string };

  it('records the seed’s changes at start', async () => {
    const acme = await streamEvents('tenant:acme');
    expect(acme.map((e) => [e['event'], e['source'], e['actor'], e['user_email']])).toEqual([
      ['tenant_created', 'seed', 'seed', undefined],
      ['member_added', 'seed', 'seed', ALICE.email],
      ['member_added', 'seed', 'seed', BOB.email],
    ]);
    const created = loggedEvents().filter((e) => (e as Line)['event'] === 'user_created');
    expect(created.map((e) => (e as Line)['user_email'])).toEqual([ALICE.email, BOB.email]);
  });

  it('a login and the token it gets: login_succeeded (users) and token_issued (the tenant)', async () => {
    const res = await call('/1/token?tenant_id=acme', {
      headers: { authorization: basic(ALICE.email, ALICE.password) },
    });
    expect(res.status).toBe(200);
    const token = res.body?.['access_token'] as string;
    secrets.add(token);
    alice = { id: res.body?.['user_id'] as string, token, jti: decodeJwt(token).jti as string };
    const who = { actor: ALICE.email, user_id: alice.id, user_email: ALICE.email };
    await expectRecorded('users', {
      event: 'login_succeeded',
      ...api,
      request_id: res.requestId,
      ...who,
    });
    await expectRecorded('tenant:acme', {
      event: 'token_issued',
      ...api,
      request_id: res.requestId,
      ...who,
      tenant_id: 'acme',
      jti: alice.jti,
    });
  });

  it('a wrong password and an unknown e-mail: login_failed with the e-mail tried', async () => {
    for (const email of [ALICE.email, 'nobody@example.com']) {
      const res = await call('/1/token?tenant_id=acme', {
        headers: { authorization: basic(email, WRONG) },
      });
      expect(res.status).toBe(401);
      await expectRecorded('users', {
        event: 'login_failed',
        ...api,
        request_id: res.requestId,
        actor: email,
        user_email: email,
      });
    }
  });

  it('no credentials at all: refused, and no login to record', async () => {
    const before = loggedEvents().length;
    expect((await call('/1/token?tenant_id=acme')).status).toBe(401);
    expect(loggedEvents()).toHaveLength(before);
  });

  it('a lockout: login_locked_out with the 429’s request id', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await call('/1/users/current/tenants', {
        headers: { authorization: basic(BOB.email, WRONG) },
      });
      expect(res.status).toBe(401);
    }
    const locked = await call('/1/users/current/tenants', {
      headers: { authorization: basic(BOB.email, BOB.password) },
    });
    expect(locked.status).toBe(429);
    await expectRecorded('users', {
      event: 'login_locked_out',
      ...api,
      request_id: locked.requestId,
      actor: BOB.email,
      user_email: BOB.email,
    });
  });

  it('a signup: user_created in the new personal tenant’s stream', async () => {
    const res = await call('/1/users', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(CAROL),
    });
    expect(res.status).toBe(201);
    const tenant = res.body?.['tenant_id'] as string;
    await expectRecorded(`tenant:${tenant}`, {
      event: 'user_created',
      ...api,
      request_id: res.requestId,
      actor: CAROL.email,
      tenant_id: tenant,
      user_id: res.body?.['user_id'],
      user_email: CAROL.email,
    });
  });

  it('a password change: password_changed (users)', async () => {
    const res = await call('/1/users/current/password', {
      method: 'PUT',
      headers: {
        authorization: basic(CAROL.email, CAROL.password),
        'content-type': 'application/json',
      },
      body: JSON.stringify({ password: CAROL_NEW }),
    });
    expect(res.status).toBe(204);
    const carol = (await streamEvents('users')).find((e) => e['request_id'] === res.requestId);
    await expectRecorded('users', {
      event: 'password_changed',
      ...api,
      request_id: res.requestId,
      actor: CAROL.email,
      user_id: carol?.['user_id'],
      user_email: CAROL.email,
    });
    expect(carol?.['user_id']).toEqual(expect.any(String));
  });

  it('a logout: logout in the token’s tenant stream, with its jti', async () => {
    const res = await call('/1/token', {
      method: 'DELETE',
      headers: { authorization: bearer(alice.token) },
    });
    expect(res.status).toBe(204);
    await expectRecorded('tenant:acme', {
      event: 'logout',
      ...api,
      request_id: res.requestId,
      actor: ALICE.email,
      tenant_id: 'acme',
      user_id: alice.id,
      user_email: ALICE.email,
      jti: alice.jti,
    });
  });

  it('never records a secret: no password, hash, token or credentials in any stream or log line', async () => {
    const keys = await client.keys(`${prefix}audit:*`);
    expect(keys.length).toBeGreaterThanOrEqual(3);
    const stored = (await Promise.all(keys.map((k) => client.xrange(k, '-', '+'))))
      .flat(2)
      .join('\n');
    const logged = log.lines.map((l) => JSON.stringify(l)).join('\n');
    const users = await client.keys(`${prefix}{dir}:user:*`);
    const hashes = await Promise.all(users.map((k) => client.hget(k, 'passwordHash')));
    const forbidden = [
      ...secrets,
      ...hashes.map((h) => h as string),
      ...[ALICE, BOB, CAROL].map((u) => basic(u.email, u.password).slice('Basic '.length)),
    ];
    expect(hashes).toHaveLength(3);
    for (const secret of forbidden) {
      expect(stored).not.toContain(secret);
      expect(logged).not.toContain(secret);
    }
    expect(stored).not.toMatch(/\$2[aby]\$|Basic |Bearer |authorization|password"/i);
  });

  it(`keeps a stream near audit.maxEventsPerStream (${MAX_EVENTS})`, async () => {
    for (let i = 0; i < 3 * MAX_EVENTS; i++)
      await call('/1/token?tenant_id=acme', {
        headers: { authorization: basic(`flood-${i}@example.com`, WRONG) },
      });
    const length = await client.xlen(`${prefix}audit:users`);
    expect(length).toBeGreaterThanOrEqual(MAX_EVENTS);
    expect(length).toBeLessThanOrEqual(2 * MAX_EVENTS);
    console.log(`users stream after ${3 * MAX_EVENTS} more events: ${length} entries`);
  });
});

describe('with Redis killed after the action', () => {
  it('the action stands, the event is logged, the failure counted', async () => {
    const failures = async () =>
      Number(
        /^tenant_gateway_audit_write_failures_total (\d+)$/m.exec(
          await (await fetch(`${adminUrlOf(gw)}/metrics`)).text(),
        )?.[1],
      );
    expect(await failures()).toBe(0);
    killOn = (line) =>
      line['msg'] === 'audit' && (line['audit'] as Line)['event'] === 'password_changed';
    const res = await call('/1/users/current/password', {
      method: 'PUT',
      headers: {
        authorization: basic(CAROL.email, CAROL_NEW),
        'content-type': 'application/json',
      },
      body: JSON.stringify({ password: CAROL.password }),
    });
    expect(res.status).toBe(204);
    const mine = log.lines.filter(
      (l) => (l['audit'] as Line | undefined)?.['request_id'] === res.requestId,
    );
    expect(mine.map((l) => [l['msg'], (l['audit'] as Line)['event']])).toEqual([
      ['audit', 'login_succeeded'],
      ['audit', 'password_changed'],
      ['audit event not written to the store', 'password_changed'],
    ]);
    expect(mine[2]?.['level']).toBe(50);
    expect(await failures()).toBe(1);
  });
});
