/**
 * `audit tail` (`--follow`: the built CLI) against a real redis-server: the events of
 * the seed and of the CLI's user, tenant and membership changes, one JSON
 * line each, oldest first; one tenant's stream or all of them merged by
 * time; `--since`; `--follow` printing an event written after it started;
 * and the refusals (no store.redis, an unknown tenant, a bad --since).
 */
import { spawn } from 'node:child_process';
import { userInfo } from 'node:os';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic } from '../support/gateway.js';
import { eventMicros } from '../../src/audit/events.js';
import { CLI, type Case, type CliHarness, releaseCliHarness, sharedCliHarness } from './harness.js';

const TIMEOUT = 60_000;
const ACTOR = `cli:${userInfo().username}`;
const PASSWORD = 'carol-password-1';

let h: CliHarness;
let kase: Case;

type Event = Record<string, unknown>;

beforeAll(async () => {
  h = await sharedCliHarness();
  kase = h.newCase();
});

afterAll(async () => {
  if (h !== undefined) await releaseCliHarness();
});

async function tail(...args: string[]): Promise<Event[]> {
  const run = await h.cli(['audit', 'tail', ...args, ...kase.c]);
  expect(run, `audit tail ${args.join(' ')}`).toMatchObject({ code: 0, stderr: '' });
  return run.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Event);
}

const brief = (e: Event) => [
  e['event'],
  e['source'],
  e['tenant_id'] ?? null,
  e['user_email'] ?? null,
];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('audit tail', () => {
  let afterSeed: string;

  it(
    'prints the seed’s and the CLI’s changes, per tenant and all streams merged by time',
    async () => {
      const seed = h.writeSeed(
        kase,
        [
          'users:',
          '  - { email: alice@example.com, password: "alice-password-1" }',
          '  - { email: bob@example.com, password: "bob-password-1" }',
          'tenants:',
          '  - { tenant_id: acme, name: Acme, cloud_region: eu-west-1, created_by: alice@example.com, members: [alice@example.com, bob@example.com] }',
        ].join('\n'),
      );
      await h.ok(['seed', seed, ...kase.c]);
      await sleep(5);
      afterSeed = new Date().toISOString();
      await sleep(5);
      const env = { env: { PW: PASSWORD } };
      const carol = await h.ok<{ user_id: string; tenant_id: string }>(
        ['user', 'add', 'carol@example.com', '--password-env', 'PW', ...kase.c],
        env,
      );
      await h.ok(['user', 'password', 'carol@example.com', '--password-env', 'PW', ...kase.c], env);
      const tenantArgs = [
        '--name',
        'Globex',
        '--region',
        'us-east-1',
        '--created-by',
        'bob@example.com',
      ];
      await h.ok(['tenant', 'add', 'globex', ...tenantArgs, ...kase.c]);
      await h.ok(['tenant', 'add', 'globex', ...tenantArgs, ...kase.c]); // unchanged: no event
      await h.ok(['member', 'add', 'globex', 'carol@example.com', ...kase.c]);
      await h.ok(['member', 'add', 'globex', 'carol@example.com', ...kase.c]); // no event
      await h.ok(['member', 'remove', 'acme', 'bob@example.com', ...kase.c]);
      await h.ok(['user', 'disable', 'bob@example.com', ...kase.c]);
      await h.ok(['user', 'enable', 'bob@example.com', ...kase.c]);
      await h.ok(['user', 'remove', 'carol@example.com', ...kase.c]);
      await h.ok(['tenant', 'remove', 'globex', ...kase.c]);

      const [acme, all] = await Promise.all([tail('--tenant', 'acme'), tail()]);
      expect(acme.map(brief)).toEqual([
        ['tenant_created', 'seed', 'acme', null],
        ['member_added', 'seed', 'acme', 'alice@example.com'],
        ['member_added', 'seed', 'acme', 'bob@example.com'],
        ['member_removed', 'cli', 'acme', 'bob@example.com'],
      ]);
      expect(acme[3]).toEqual({
        time: expect.any(String),
        event: 'member_removed',
        source: 'cli',
        actor: ACTOR,
        tenant_id: 'acme',
        user_id: expect.any(String),
        user_email: 'bob@example.com',
      });

      const times = all.map((e) => eventMicros(e['time'] as string));
      expect(times).toEqual([...times].sort((a, b) => a - b));
      expect(all.filter((e) => e['source'] !== 'seed').map(brief)).toEqual([
        ['user_created', 'cli', carol.tenant_id, 'carol@example.com'],
        ['password_changed', 'cli', null, 'carol@example.com'],
        ['tenant_created', 'cli', 'globex', null],
        ['member_added', 'cli', 'globex', 'carol@example.com'],
        ['member_removed', 'cli', 'acme', 'bob@example.com'],
        ['user_disabled', 'cli', null, 'bob@example.com'],
        ['user_enabled', 'cli', null, 'bob@example.com'],
        ['user_removed', 'cli', null, 'carol@example.com'],
        ['member_removed', 'cli', 'globex', 'carol@example.com'],
        ['tenant_removed', 'cli', 'globex', null],
      ]);
      expect(all.find((e) => e['event'] === 'user_removed')).toMatchObject({
        user_id: carol.user_id,
        tenant_ids: [carol.tenant_id, 'globex'].sort(),
      });
      expect(all.find((e) => e['event'] === 'tenant_removed')).toMatchObject({ user_ids: [] });
      expect(JSON.stringify(all)).not.toContain(PASSWORD);
      // The seed made two users with their tenants, one tenant and two memberships.
      expect(all.filter((e) => e['source'] === 'seed').map((e) => e['event'])).toEqual([
        'user_created',
        'user_created',
        'tenant_created',
        'member_added',
        'member_added',
      ]);
    },
    TIMEOUT,
  );

  it(
    '--since: from an ISO time or a duration back from now',
    async () => {
      const [since, lastHour] = await Promise.all([
        tail('--since', afterSeed),
        tail('--since', '1h'),
      ]);
      expect(since.every((e) => e['source'] === 'cli')).toBe(true);
      expect(since).toHaveLength(10);
      expect(lastHour).toHaveLength(15);
      await sleep(1100);
      const [lastSecond, refused] = await Promise.all([
        tail('--since', '1s'),
        h.fails(['audit', 'tail', '--since', 'yesterday', ...kase.c]),
      ]);
      expect(lastSecond).toEqual([]);
      expect(refused).toMatch(/--since must be an ISO 8601 time .* or a duration/);
    },
    TIMEOUT,
  );

  it(
    'a removed tenant’s stream stays readable; an unknown tenant is refused',
    async () => {
      expect((await tail('--tenant', 'globex')).map((e) => e['event'])).toEqual([
        'tenant_created',
        'member_added',
        'member_removed',
        'tenant_removed',
      ]);
      expect(await h.fails(['audit', 'tail', '--tenant', 'nosuch', ...kase.c])).toBe(
        'error: no tenant nosuch, and no audit events for it\n',
      );
    },
    TIMEOUT,
  );

  it(
    '--follow prints what is written after it started, until SIGINT',
    async () => {
      const child = spawn(process.execPath, [CLI, 'audit', 'tail', '--follow', ...kase.c], {
        env: h.env(),
        cwd: h.root,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const lines = () => stdout.split('\n').filter((l) => l !== '');
      const until = async (n: number) => {
        for (let i = 0; i < 200 && lines().length < n; i++) await sleep(50);
        expect(lines().length, stderr).toBe(n);
      };
      try {
        await until(15);
        await h.ok(['member', 'add', 'acme', 'bob@example.com', ...kase.c]);
        await until(16);
        await h.ok(['user', 'disable', 'alice@example.com', ...kase.c]);
        await until(17);
        expect(
          lines()
            .slice(15)
            .map((l) => brief(JSON.parse(l) as Event)),
        ).toEqual([
          ['member_added', 'cli', 'acme', 'bob@example.com'],
          ['user_disabled', 'cli', null, 'alice@example.com'],
        ]);
      } finally {
        child.kill('SIGINT');
      }
      expect(await exited).toBe(0);
      expect(stderr).toBe('');
    },
    TIMEOUT,
  );

  it(
    'refuses without store.redis: the in-memory store’s streams live in the serving process',
    async () => {
      const config = join(h.root, 'memory.yaml');
      writeFileSync(config, 'listen: { host: 127.0.0.1, port: 0 }\n');
      expect(await h.fails(['audit', 'tail', '--config', config])).toMatch(
        /^error: audit tail needs store\.redis: the in-memory store keeps its audit streams inside the serving process/,
      );
    },
    TIMEOUT,
  );

  it(
    'prints no raw control character, U+2028 or U+2029: one line per event, nothing for the terminal',
    async () => {
      const own = h.newCase('signup: { enabled: true }');
      await h.addKey(own);
      // What a client can put in an event (the user of a refused login) and in a
      // tenant's name (signup), through a served gateway.
      const user = 'x\u2028{"event"\u2029\u0085\u009b[31m@example.com';
      const name = 'N\u2028{"event":"forged"}\u009b[2J';
      const served = await h.serve(own);
      try {
        const refused = await fetch(`${served.base}/1/token?tenant_id=acme`, {
          headers: { authorization: basic(user, 'wrong-password-1') },
        });
        expect(refused.status).toBe(401);
        const signup = await fetch(`${served.base}/1/users`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'named@example.com', password: PASSWORD, name }),
        });
        expect(signup.status).toBe(201);
      } finally {
        await served.stop();
      }
      // Entries another writer left in the stream: an older gateway's (raw C1 and
      // U+2028 in valid JSON), and text that is not JSON at all (ESC, CR, LF).
      const older = `{"time":"2026-01-01T00:00:00.000000Z","event":"login_failed","source":"api","actor":"o\u2028\u009b[31m@example.com"}`;
      const foreign = 'not json \u001b[2J\r\u001b]0;title\u0007\nsecond line';
      const prefix = /keyPrefix: "([^"]+)"/.exec(readFileSync(own.config, 'utf8'))?.[1] as string;
      const redis = new Redis(h.env().TG_TEST_REDIS_URL as string);
      try {
        await redis.xadd(`${prefix}audit:users`, '*', 'event', older);
        await redis.xadd(`${prefix}audit:users`, '*', 'event', foreign);
      } finally {
        redis.disconnect();
      }

      const run = await h.cli(['audit', 'tail', ...own.c]);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      expect(run.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/);
      const lines = run.stdout.split('\n').filter((l) => l !== '');
      const events = lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Event);
      expect(events.find((e) => e['user_email'] === user)).toMatchObject({
        event: 'login_failed',
        source: 'api',
      });
      expect(events.find((e) => e['actor'] === 'o\u2028\u009b[31m@example.com')).toBeDefined();
      expect(lines).toContain('not json \\u001b[2J\\u000d\\u001b]0;title\\u0007\\u000asecond line');

      // `tenant list` prints the personal tenant's name (the signup name) as JSON.
      const tenants = await h.cli(['tenant', 'list', ...own.c]);
      expect(tenants).toMatchObject({ code: 0, stderr: '' });
      expect(tenants.stdout).not.toMatch(/[\u007f-\u009f\u2028\u2029]/);
      expect((JSON.parse(tenants.stdout) as { name: string }[]).map((t) => t.name)).toContain(name);
    },
    TIMEOUT,
  );
});
