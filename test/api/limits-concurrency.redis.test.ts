/**
 * Limits that hold under concurrency (issue 12): a login attempt takes its
 * points before any bcrypt work, atomically, on both store backends; one
 * client cannot fill the bcrypt queue; signup and password change refuse what
 * HTTP Basic could never carry back.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBruteForceGuard } from '../../src/auth/passwords/brute-force.js';
import { validateConfig } from '../../src/config/index.js';
import type { GatewayError } from '../../src/errors.js';
import { createMemoryStore, createRedisStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import { expectError } from '../support/expect-error.js';
import { basic } from '../support/gateway.js';
import {
  ALICE,
  BOB,
  startIdentityFixture,
  type IdentityFixture,
} from '../support/identity-fixture.js';
import { startRedisServer, type TestRedisServer } from '../support/redis-server.js';
import { changePassword, signUp } from '../support/account-requests.js';

type Backend = 'redis' | 'memory';
/** `store: {}` is the embedded memory store; the fixture's Redis then only idles. */
const backendConfig = (backend: Backend) => (backend === 'memory' ? { store: {} } : {});

interface Answer {
  status: number;
  retryAfter: string | null;
  error?: string;
}

async function answerOf(res: Response): Promise<Answer> {
  const text = await res.text();
  const error = res.status >= 400 ? (JSON.parse(text) as { error: string }).error : undefined;
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    ...(error === undefined ? {} : { error }),
  };
}

const login = (
  url: string,
  email: string,
  password: string,
  clientIp?: string,
): Promise<Response> =>
  fetch(`${url}/1/token?tenant_id=acme`, {
    headers: {
      authorization: basic(email, password),
      ...(clientIp === undefined ? {} : { 'x-forwarded-for': clientIp }),
    },
  });

const count = (answers: Answer[], status: number) =>
  answers.filter((a) => a.status === status).length;

function expectThrottled(answers: Answer[]): void {
  for (const a of answers.filter((x) => x.status === 429)) {
    expect(a.error).toBe('too_many_requests');
    expect(Number(a.retryAfter)).toBeGreaterThan(0);
  }
}

describe.each<Backend>(['redis', 'memory'])('login budget under concurrency (%s)', (backend) => {
  let fx: IdentityFixture;
  beforeAll(async () => {
    fx = await startIdentityFixture({
      ...backendConfig(backend),
      trustedProxies: ['127.0.0.1'],
      limits: {
        // Queue bounds high enough that only the budget refuses here.
        login: {
          perEmail: 5,
          perIp: 1000,
          windowSeconds: 600,
          maxQueuedPerEmail: 1000,
          maxQueuedPerIp: 1000,
        },
        signup: { perIp: 20, windowSeconds: 600 },
      },
    });
  });
  afterAll(() => fx.close());

  it('60 concurrent wrong passwords for one e-mail: exactly perEmail reach bcrypt, the rest are 429', async () => {
    const answers = await Promise.all(
      Array.from({ length: 60 }, () =>
        login(fx.gw.url, ALICE.email, 'wrong-password', '10.0.0.1').then(answerOf),
      ),
    );
    expect(count(answers, 401)).toBe(5);
    expect(count(answers, 429)).toBe(55);
    expect(
      answers.filter((a) => a.status === 401).every((a) => a.error === 'invalid_credentials'),
    ).toBe(true);
    expectThrottled(answers);
    // The budget is spent: the right password no longer helps, from anywhere.
    const locked = await answerOf(await login(fx.gw.url, ALICE.email, ALICE.password, '10.0.0.2'));
    expect(locked.status).toBe(429);
  });

  it('200 concurrent guesses with the right password among them: at most perEmail wrong verdicts in all', async () => {
    const correctAt = 100;
    const answers = await Promise.all(
      Array.from({ length: 201 }, (_, i) =>
        login(
          fx.gw.url,
          BOB.email,
          i === correctAt ? BOB.password : `guess-${i}-password`,
          `10.0.1.${i % 200}`,
        ).then(answerOf),
      ),
    );
    const correct = answers[correctAt] as Answer;
    const wrong = answers.filter((_, i) => i !== correctAt);
    // Five wrong passwords were checked, no more, however the requests interleaved.
    expect(count(wrong, 401)).toBe(5);
    expect(count(wrong, 429)).toBe(195);
    // The right one was checked only if it came while points were left.
    expect([200, 429]).toContain(correct.status);
    expectThrottled(answers);
  });

  it('100 concurrent signups from one address with signup.perIp 20: exactly 20 created', async () => {
    const run = randomUUID().slice(0, 8);
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        fetch(`${fx.gw.url}/1/users`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': '10.0.2.1' },
          body: JSON.stringify({ email: `s-${run}-${i}@example.com`, password: 'long-enough-1' }),
        }).then(answerOf),
      ),
    );
    expect(count(answers, 201)).toBe(20);
    expect(count(answers, 429)).toBe(80);
    expectThrottled(answers);
  });
});

describe.each<Backend>(['redis', 'memory'])('rate limiter reservations (%s)', (backend) => {
  let redis: TestRedisServer | undefined;
  let store: Store;
  beforeAll(async () => {
    if (backend === 'redis') {
      redis = await startRedisServer();
      store = await createRedisStore({
        url: redis.url,
        keyPrefix: `t${randomUUID().slice(0, 8)}:`,
        commandTimeoutMs: 1000,
        connectTimeoutMs: 5000,
      });
    } else store = createMemoryStore();
  });
  afterAll(async () => {
    await store.close();
    await redis?.stop();
  });

  const limiter = (points: number) =>
    store.loginCounter({ name: `rl-${randomUUID()}`, points, windowSeconds: 60 });

  it('grants exactly `points` of many concurrent reservations, and a refund gives one back', async () => {
    const rl = limiter(7);
    const outcomes = await Promise.all(Array.from({ length: 50 }, () => rl.reserve('k')));
    const granted = outcomes.filter((o) => o.granted);
    expect(granted.length).toBe(7);
    for (const o of outcomes) {
      if (!o.granted) {
        expect(o.retryAfter).toBeGreaterThan(0);
        expect(o.retryAfter).toBeLessThanOrEqual(60);
      }
    }
    expect(await rl.retryAfter('k')).toBeGreaterThan(0);
    expect((await rl.reserve('other')).granted).toBe(true);
    const first = granted[0];
    if (first?.granted) await first.refund();
    expect(await rl.retryAfter('k')).toBe(0);
    const again = await Promise.all(Array.from({ length: 10 }, () => rl.reserve('k')));
    expect(again.filter((o) => o.granted).length).toBe(1);
  });

  it('a refund never counts below zero, and a refused reservation counts nothing', async () => {
    const rl = limiter(1);
    const taken = await rl.reserve('k');
    expect(taken.granted).toBe(true);
    expect((await rl.reserve('k')).granted).toBe(false);
    if (taken.granted) {
      await taken.refund();
      await taken.refund();
    }
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => rl.reserve('k')));
    expect(outcomes.filter((o) => o.granted).length).toBe(1);
  });
});

describe('login attempts at the guard', () => {
  const guard = (perEmail: number, perIp: number, maxQueued = 2) =>
    createBruteForceGuard(createMemoryStore(), {
      login: {
        perEmail,
        perIp,
        windowSeconds: 60,
        maxQueuedPerEmail: maxQueued,
        maxQueuedPerIp: maxQueued,
      },
      signup: { perIp: 1, windowSeconds: 60 },
    });
  const refusal = async (attempt: Promise<unknown>) => {
    const err = (await attempt.then(
      () => expect.unreachable('admitted'),
      (e: unknown) => e,
    )) as GatewayError;
    expect(err.code).toBe('too_many_requests');
    return err;
  };

  it('an attempt that reached no verdict gives its points back', async () => {
    const g = guard(2, 100);
    for (let i = 0; i < 5; i++) await (await g.beginLogin('a@example.com', 'ip')).end('abandoned');
    await (await g.beginLogin('a@example.com', 'ip')).end('failed');
    await (await g.beginLogin('a@example.com', 'ip')).end('failed');
    await refusal(g.beginLogin('a@example.com', 'ip'));
  });

  it('holds a queue place per e-mail and per address until the attempt ends; 429 with Retry-After past it', async () => {
    const g = guard(100, 100);
    const held = [
      await g.beginLogin('a@example.com', 'ip-1'),
      await g.beginLogin('a@example.com', 'ip-2'),
    ];
    const err = await refusal(g.beginLogin('a@example.com', 'ip-3'));
    expect(err.headers).toEqual({ 'retry-after': '1' });
    const other = await g.beginLogin('b@example.com', 'ip-1'); // ip-1 now holds two
    await refusal(g.beginLogin('c@example.com', 'ip-1'));
    await other.end('failed');
    await held[0]?.end('failed');
    await (await g.beginLogin('a@example.com', 'ip-3')).end('failed');
  });

  it('a refused attempt keeps no queue place', async () => {
    const g = guard(100, 1, 1);
    await (await g.beginLogin('a@example.com', 'ip-1')).end('failed');
    for (let i = 0; i < 3; i++) await refusal(g.beginLogin('a@example.com', 'ip-1'));
    // The e-mail's one place is free: another address gets its verdict.
    await (await g.beginLogin('a@example.com', 'ip-2')).end('failed');
  });
});

describe('what a right password gives back', () => {
  let fx: IdentityFixture;
  beforeAll(async () => {
    fx = await startIdentityFixture({
      trustedProxies: ['127.0.0.1'],
      limits: {
        login: { perEmail: 3, perIp: 6, windowSeconds: 600 },
        signup: { perIp: 20, windowSeconds: 600 },
      },
    });
  });
  afterAll(() => fx.close());

  const statusOf = async (email: string, password: string, ip: string) =>
    (await login(fx.gw.url, email, password, ip).then(answerOf)).status;

  it('its own points only: failures counted from elsewhere stay counted', async () => {
    expect(await statusOf(ALICE.email, 'wrong-password', '10.5.0.1')).toBe(401);
    expect(await statusOf(ALICE.email, 'wrong-password', '10.5.0.1')).toBe(401);
    // Each success gives back the point it took: the owner logs in as often as she likes.
    for (let i = 0; i < 3; i++)
      expect(await statusOf(ALICE.email, ALICE.password, '10.5.0.2')).toBe(200);
    // ...but did not erase the two failures: one more spends the budget.
    expect(await statusOf(ALICE.email, 'wrong-password', '10.5.0.1')).toBe(401);
    expect(await statusOf(ALICE.email, ALICE.password, '10.5.0.2')).toBe(429);
  });

  it("an attacker's own account does not reset its address's budget", async () => {
    const ip = '10.6.0.1';
    for (let i = 0; i < 6; i++) {
      if (i > 0) expect(await statusOf(BOB.email, BOB.password, ip)).toBe(200);
      expect(await statusOf(`target-${i}@example.com`, 'guess-password', ip)).toBe(401);
    }
    // Six guesses spent the address's budget, however many right passwords came between.
    expect(await statusOf('target-6@example.com', 'guess-password', ip)).toBe(429);
    expect(await statusOf(BOB.email, BOB.password, ip)).toBe(429);
  });
});

describe('one client cannot fill the bcrypt queue', () => {
  let fx: IdentityFixture;
  beforeAll(async () => {
    fx = await startIdentityFixture({
      trustedProxies: ['127.0.0.1'],
      // One thread and a real cost: a login waits for every job queued before it.
      passwords: { bcryptCost: 8, workers: 1 },
      limits: {
        login: {
          perEmail: 1000,
          perIp: 1000,
          windowSeconds: 600,
          maxQueuedPerEmail: 4,
          maxQueuedPerIp: 4,
        },
        signup: { perIp: 20, windowSeconds: 600 },
      },
    });
  });
  afterAll(() => fx.close());

  /**
   * Sends the flood's 200 logins at once and, once the gateway has received
   * all of them, Bob's login from his own address. Returns how many flood
   * logins got a password verdict (401) while Bob waited: with a FIFO bcrypt
   * queue, the jobs the flood held when Bob came.
   */
  async function verdictsWhileBobWaits(
    flood: () => Promise<Response>[],
  ): Promise<{ whileBobWaited: number; answers: Answer[] }> {
    const server = fx.gw.gateway.server;
    let received = 0;
    let allReceived!: () => void;
    const all = new Promise<void>((resolve) => (allReceived = resolve));
    const onRequest = () => {
      if (++received === 200) allReceived();
    };
    server.on('request', onRequest);
    const order: string[] = [];
    try {
      const floodAnswers = flood().map((p) =>
        p.then(answerOf).then((a) => {
          order.push(String(a.status));
          return a;
        }),
      );
      await all;
      // Let the last handlers reach the bcrypt queue (or their 429).
      for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
      const sentAt = order.length;
      const bob = await answerOf(await login(fx.gw.url, BOB.email, BOB.password, '10.9.9.9'));
      const whileBobWaited = order.slice(sentAt).filter((s) => s === '401').length;
      expect(bob.status).toBe(200);
      return { whileBobWaited, answers: await Promise.all(floodAnswers) };
    } finally {
      server.off('request', onRequest);
    }
  }

  it('a flood from one address waits behind at most maxQueuedPerIp of its own jobs', async () => {
    const { whileBobWaited, answers } = await verdictsWhileBobWaits(() =>
      Array.from({ length: 200 }, (_, i) =>
        login(fx.gw.url, `nobody-${i}@example.com`, 'wrong-password', '10.0.3.1'),
      ),
    );
    // Without the bound Bob waits behind the whole flood (~200 verdicts).
    // Two beyond the bound: jobs queued after Bob may finish while his
    // token is signed.
    expect(whileBobWaited).toBeLessThanOrEqual(4 + 2);
    expect(count(answers, 429)).toBeGreaterThan(0);
    expectThrottled(answers);
  });

  it('a flood on one e-mail from many addresses is bounded by maxQueuedPerEmail', async () => {
    const { whileBobWaited, answers } = await verdictsWhileBobWaits(() =>
      Array.from({ length: 200 }, (_, i) =>
        login(fx.gw.url, ALICE.email, 'wrong-password', `10.0.4.${i}`),
      ),
    );
    expect(whileBobWaited).toBeLessThanOrEqual(4 + 2);
    expect(count(answers, 429)).toBeGreaterThan(0);
    expectThrottled(answers);
  });
});

describe('passwords and e-mails that HTTP Basic could not carry back', () => {
  let fx: IdentityFixture;
  beforeAll(async () => {
    fx = await startIdentityFixture({
      limits: {
        login: { perEmail: 100, perIp: 1000, windowSeconds: 600 },
        signup: { perIp: 1000, windowSeconds: 600 },
      },
    });
  });
  afterAll(() => fx.close());

  const signup = (email: string, password: string) => signUp(fx.gw.url, { email, password });
  const fresh = () => `u-${randomUUID().slice(0, 8)}@example.com`;

  it.each([
    ['a tab', 'pass\tword-1'],
    ['a newline', 'password-1\n'],
    ['NUL', 'pass\u0000word-1'],
    ['DEL', 'pass\u007fword-1'],
    ['a lone surrogate', 'password-\ud800-1'],
  ])('signup refuses a password with %s (400)', async (_, password) => {
    await expectError(await signup(fresh(), password), 400, 'invalid_request');
  });

  it.each([
    ['a colon', 'a:b@example.com'],
    ['a control character', 'a\u0001b@example.com'],
  ])('signup refuses an e-mail with %s (400)', async (_, email) => {
    await expectError(await signup(email, 'long-enough-1'), 400, 'invalid_request');
  });

  it('a colon in a password is fine: signup, then login with it', async () => {
    const email = fresh();
    const password = 'pass:word:1';
    expect((await signup(email, password)).status).toBe(201);
    const res = await fetch(`${fx.gw.url}/1/users/current/tenants`, {
      headers: { authorization: basic(email, password) },
    });
    expect(res.status).toBe(200);
  });

  it('password change refuses a control character (400) and keeps the old password', async () => {
    const email = fresh();
    expect((await signup(email, 'old-password-1')).status).toBe(201);
    const change = await changePassword(
      fx.gw.url,
      { email, password: 'old-password-1' },
      'new-password\u001b1',
    );
    await expectError(change, 400, 'invalid_request');
    const res = await fetch(`${fx.gw.url}/1/users/current/tenants`, {
      headers: { authorization: basic(email, 'old-password-1') },
    });
    expect(res.status).toBe(200);
  });
});

describe('config: limits.login queue bounds', () => {
  const validate = (login: Record<string, unknown>) => () =>
    validateConfig({ limits: { login } }, process.cwd(), 'test');

  it('default to 4 per e-mail and 8 per address, and reach the guard when given', () => {
    const config = validateConfig({}, process.cwd(), 'test');
    expect(config.limits.login).toMatchObject({ maxQueuedPerEmail: 4, maxQueuedPerIp: 8 });
    const given = validateConfig(
      { limits: { login: { maxQueuedPerEmail: '3', maxQueuedPerIp: 8 } } },
      process.cwd(),
      'test',
    );
    expect(given.limits.login).toMatchObject({ maxQueuedPerEmail: 3, maxQueuedPerIp: 8 });
  });

  it('names the key path of a bad value', () => {
    expect(validate({ maxQueuedPerEmail: 0 })).toThrow(/limits\.login\.maxQueuedPerEmail/);
    expect(validate({ maxQueuedPerIp: 'many' })).toThrow(/limits\.login\.maxQueuedPerIp/);
  });
});
