/**
 * `npm run soak` (issue 14): mixed traffic against two built gateways on one
 * Redis, with a Redis restart in the middle, then checks that nothing the
 * gateway promises was broken. Exits 1 on any violation.
 *
 * Runs: a private redis-server with an append-only file fsynced on every
 * write (a restart loses nothing acknowledged), two `dist/cli.js serve`
 * processes, an echo upstream and a WebSocket echo upstream. Traffic, each
 * kind a loop of its own: proxied requests with live tokens, logins, tenant
 * lists, WebSockets (open, echo, close), password changes, logouts
 * (`DELETE /1/token`), membership removals (the `member remove` command),
 * signups, and requests with every token that was ended. At half time Redis
 * is killed (SIGKILL) and started again a second later.
 *
 * Checked afterwards:
 * - no 5xx but `503 unavailable`, and those only from the kill until
 *   RECOVERY_MS after the restart;
 * - no ended token (logout, password change, membership removal) answered
 *   200 by a request sent after the end was acknowledged;
 * - each gateway's RSS and open file descriptors (its /metrics) flat: the
 *   median of the last quarter of samples within RSS_GROWTH_MB / FD_GROWTH of
 *   the first quarter's (after the warm-up);
 * - nothing lost: every signed-up user logs in to its personal tenant, every
 *   changed password is the one that works, every removed membership stays
 *   removed.
 *
 * Environment: SOAK_SECONDS (default 300). bcrypt cost 4: the soak is about
 * correctness and leaks, not login throughput (see `npm run bench`).
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { positiveInt } from '../bench/env.js';
import { imageNodeFlags } from '../bench/image-flags.js';
import {
  createTeardown,
  findFreePort,
  PROJECT_ROOT,
  peakRssMb,
  rssMb,
  runMain,
  sleep,
  spawnNode,
  waitForPort,
  type BenchProcess,
} from '../bench/processes.js';
import { startRedisServer } from '../test/support/redis-server.js';
import { writeSharedGatewayFiles } from '../test/support/shared-gateway-files.js';
import { startEchoUpstream, startWebSocketUpstream } from '../test/support/upstream.js';

const run = promisify(execFile);
const SECONDS = positiveInt('SOAK_SECONDS', 300);
const RECOVERY_MS = 10_000;
const RSS_GROWTH_MB = 25;
const FD_GROWTH = 20;
const TENANT = 'soak-org';
const USERS = 12;

const teardown = createTeardown();

interface User {
  id: string;
  email: string;
  password: string;
  member: boolean;
}
interface Token {
  value: string;
  user: User;
  /** When its end was acknowledged (ms since the epoch); undefined while live. */
  endedAt?: number;
  why?: string;
}
interface Sample {
  at: number;
  gateway: number;
  rssMb: number;
  fds: number;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tg-soak-'));
  teardown.add(() => rmSync(dir, { recursive: true, force: true }));
  const redis = await startRedisServer({ persistent: true });
  teardown.add(() => redis.stop());
  const [echo, ws] = await Promise.all([startEchoUpstream(), startWebSocketUpstream()]);
  teardown.add(() => echo.close());
  teardown.add(() => ws.close());

  const users: User[] = Array.from({ length: USERS }, (_, i) => ({
    id: '',
    email: `soak-${i}@example.com`,
    password: `soak-password-${i}-0`,
    member: true,
  }));
  await writeSharedGatewayFiles(dir, users, { id: TENANT, name: 'Soak' });
  const configFor = (port: number, adminPort: number, file: string): string => {
    writeFileSync(
      join(dir, file),
      stringify({
        listen: { host: '127.0.0.1', port },
        admin: { host: '127.0.0.1', port: adminPort }, // /metrics, read below
        store: { redis: { url: redis.url, keyPrefix: 'soak:' } },
        seed: './seed.yaml',
        tokens: { keys: './keys', ttlSeconds: 3600 },
        passwords: { bcryptCost: 4 },
        signup: { enabled: true },
        limits: {
          login: {
            perEmail: 1_000_000,
            perIp: 1_000_000,
            maxQueuedPerEmail: 1000,
            maxQueuedPerIp: 1000,
          },
          signup: { perIp: 1_000_000 },
        },
        routes: [
          { prefix: '/api', upstream: echo.url, tenant: { header: 'X-Tenant-Id' } },
          { prefix: '/live', upstream: ws.url },
        ],
        log: { level: 'warn' },
      }),
    );
    return join(dir, file);
  };
  const gateways: { url: string; adminUrl: string; proc: BenchProcess }[] = [];
  for (const name of ['a', 'b']) {
    const [port, adminPort] = [await findFreePort(), await findFreePort()];
    const proc = spawnNode(
      `gateway ${name}`,
      // The image's Node flags: the memory watched is the image's.
      [
        ...imageNodeFlags(),
        'dist/cli.js',
        'serve',
        '--config',
        configFor(port, adminPort, `${name}.yaml`),
      ],
      PROJECT_ROOT,
    );
    teardown.add(() => proc.stop());
    await waitForPort(proc, port, 30_000);
    gateways.push({
      url: `http://127.0.0.1:${port}`,
      adminUrl: `http://127.0.0.1:${adminPort}`,
      proc,
    });
  }
  const cliConfig = join(dir, 'a.yaml');
  const pick = <T>(list: T[]): T => list[Math.floor(Math.random() * list.length)] as T;
  const gateway = () => pick(gateways).url;
  const basic = (u: { email: string; password: string }) =>
    `Basic ${Buffer.from(`${u.email}:${u.password}`).toString('base64')}`;

  // Everything that was answered, for the checks.
  const answers: { kind: string; status: number; error?: string; at: number }[] = [];
  const violations: string[] = [];
  const request = async (kind: string, url: string, init: RequestInit = {}) => {
    const at = Date.now();
    try {
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
      const text = await res.text();
      let error: string | undefined;
      if (res.status >= 400) {
        try {
          error = (JSON.parse(text) as { error?: string }).error;
        } catch {
          error = undefined;
        }
      }
      answers.push({ kind, status: res.status, ...(error === undefined ? {} : { error }), at });
      return { status: res.status, text };
    } catch (err) {
      answers.push({ kind, status: 0, error: String(err), at });
      return { status: 0, text: '' };
    }
  };

  const tokens: Token[] = [];
  const live = () => tokens.filter((t) => t.endedAt === undefined && t.user.member);
  const ended = () => tokens.filter((t) => t.endedAt !== undefined);
  const login = async (user: User) => {
    const res = await request('login', `${gateway()}/1/token?tenant_id=${TENANT}`, {
      headers: { authorization: basic(user) },
    });
    if (res.status !== 200) return;
    const value = (JSON.parse(res.text) as { access_token: string }).access_token;
    user.id ||= (
      JSON.parse(Buffer.from(value.split('.')[1] as string, 'base64url').toString()) as {
        sub: string;
      }
    ).sub;
    tokens.push({ value, user });
  };
  for (const user of users) await login(user);

  const startedAt = Date.now();
  const endsAt = startedAt + SECONDS * 1000;
  let outage: { from: number; to?: number } | undefined;
  const signups: { email: string; password: string; tenantId: string }[] = [];
  const samples: Sample[] = [];

  const loop = async (pauseMs: number, body: () => Promise<void>) => {
    while (Date.now() < endsAt) {
      await body();
      await sleep(pauseMs);
    }
  };
  const progress = setInterval(() => {
    const done = Math.round((Date.now() - startedAt) / 1000);
    process.stderr.write(
      `» soak: ${done} of ${SECONDS} s, ${answers.length} answers, ${violations.length} violations\n`,
    );
  }, 30_000);
  teardown.add(() => clearInterval(progress));

  const loops = [
    ...Array.from({ length: 4 }, () =>
      loop(5, async () => {
        const token = live().length > 0 ? pick(live()) : undefined;
        if (token === undefined) return sleep(100);
        const sentAt = Date.now();
        const res = await request('proxied', `${gateway()}/api/orders/1`, {
          headers: { authorization: `Bearer ${token.value}`, 'x-tenant-id': TENANT },
        });
        if (res.status === 200 && token.endedAt !== undefined && token.endedAt < sentAt)
          violations.push(`ended token (${token.why}) accepted`);
      }),
    ),
    loop(50, () => login(pick(users.filter((u) => u.member)))),
    loop(100, async () => {
      const user = pick(users);
      if (user.id !== '')
        await request('tenants', `${gateway()}/1/users/${user.id}/tenants`, {
          headers: { authorization: basic(user) },
        });
    }),
    loop(100, async () => {
      const token = live().length > 0 ? pick(live()) : undefined;
      if (token === undefined) return;
      const at = Date.now();
      const ok = await webSocketRoundTrip(gateway(), token.value);
      // A token ended meanwhile closes its WebSocket (1008): that is the promise, not a failure.
      if (!ok && token.endedAt !== undefined) return;
      answers.push({ kind: 'websocket', status: ok ? 101 : 0, at });
    }),
    loop(3000, async () => {
      const user = pick(users.filter((u) => u.id !== ''));
      const next = `soak-password-${randomUUID().slice(0, 8)}`;
      const res = await request('password', `${gateway()}/1/users/${user.id}/password`, {
        method: 'PUT',
        headers: { authorization: basic(user), 'content-type': 'application/json' },
        body: JSON.stringify({ password: next }),
      });
      if (res.status !== 204) return;
      const at = Date.now();
      user.password = next;
      for (const t of tokens)
        if (t.user === user && t.endedAt === undefined)
          Object.assign(t, { endedAt: at, why: 'password change' });
    }),
    loop(1000, async () => {
      const token = live().length > 0 ? pick(live()) : undefined;
      if (token === undefined) return;
      const res = await request('logout', `${gateway()}/1/token`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${token.value}` },
      });
      if (res.status === 204 && token.endedAt === undefined)
        Object.assign(token, { endedAt: Date.now(), why: 'logout' });
    }),
    loop(200, async () => {
      const token = ended().length > 0 ? pick(ended()) : undefined;
      if (token === undefined) return;
      const sentAt = Date.now();
      const res = await request('ended-token', `${gateway()}/api/orders/1`, {
        headers: { authorization: `Bearer ${token.value}`, 'x-tenant-id': TENANT },
      });
      if (res.status === 200 && (token.endedAt as number) < sentAt)
        violations.push(`ended token (${token.why}) accepted`);
    }),
    loop(2000, async () => {
      const email = `signup-${randomUUID().slice(0, 8)}@example.com`;
      const password = `signup-password-${randomUUID().slice(0, 6)}`;
      const res = await request('signup', `${gateway()}/1/users`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password }),
      });
      if (res.status === 201)
        signups.push({
          email,
          password,
          tenantId: (JSON.parse(res.text) as { tenant_id: string }).tenant_id,
        });
    }),
    loop(Math.max(5000, (SECONDS * 1000) / 6), async () => {
      if (Date.now() - startedAt < 10_000) return;
      const user = users.find((u) => u.member && u !== users[0]);
      if (user === undefined) return;
      // Asynchronously: a synchronous child would stall every other loop of
      // this process for as long as the command waits for Redis (up to its
      // connect timeout in the outage), and their kept-alive connections to the
      // gateways would time out under them.
      const out = await run(
        process.execPath,
        ['dist/cli.js', 'member', 'remove', TENANT, user.email, '--config', cliConfig],
        { cwd: PROJECT_ROOT },
      ).then(
        () => ({ status: 0 }),
        () => ({ status: 1 }),
      );
      answers.push({ kind: 'member-remove', status: out.status === 0 ? 204 : 503, at: Date.now() });
      if (out.status !== 0) return;
      const at = Date.now();
      user.member = false;
      for (const t of tokens)
        if (t.user === user && t.endedAt === undefined)
          Object.assign(t, { endedAt: at, why: 'membership removal' });
    }),
    loop(5000, async () => {
      for (const [index, gw] of gateways.entries()) {
        const res = await request('metrics', `${gw.adminUrl}/metrics`);
        const metric = (name: string) =>
          Number(new RegExp(`^${name} (\\S+)`, 'm').exec(res.text)?.[1] ?? NaN);
        if (res.status === 200)
          samples.push({
            at: Date.now(),
            gateway: index,
            // MB as rssMb() and the peak count them (2^20 bytes).
            rssMb: metric('process_resident_memory_bytes') / 2 ** 20,
            fds: metric('process_open_fds'),
          });
        else samples.push({ at: Date.now(), gateway: index, rssMb: rssMb(gw.proc.pid), fds: NaN });
      }
    }),
    (async () => {
      await sleep((SECONDS * 1000) / 2);
      process.stderr.write('» soak: killing Redis\n');
      outage = { from: Date.now() };
      await redis.kill();
      await sleep(1000);
      await redis.restart();
      outage.to = Date.now();
      process.stderr.write('» soak: Redis restarted\n');
    })(),
  ];
  await Promise.all(loops);

  // Nothing lost, asked of both gateways.
  for (const gw of gateways) {
    for (const s of signups) {
      const res = await request('check', `${gw.url}/1/token?tenant_id=${s.tenantId}`, {
        headers: { authorization: basic(s) },
      });
      if (res.status !== 200) violations.push(`signup ${s.email} lost (${res.status})`);
    }
    for (const u of users) {
      const res = await request('check', `${gw.url}/1/token?tenant_id=${TENANT}`, {
        headers: { authorization: basic(u) },
      });
      const expected = u.member ? 200 : 403;
      if (res.status !== expected)
        violations.push(
          `${u.email}: ${res.status}, expected ${expected} (password or membership lost)`,
        );
    }
  }

  // 5xx only as the outage's 503 unavailable.
  const window =
    outage === undefined
      ? undefined
      : { from: outage.from, to: (outage.to ?? Date.now()) + RECOVERY_MS };
  for (const a of answers) {
    if (a.status < 500 && a.status !== 0) continue;
    const inOutage = window !== undefined && a.at >= window.from && a.at <= window.to;
    if (a.status === 503 && a.error === 'unavailable' && inOutage) continue;
    if (a.kind === 'member-remove' && inOutage) continue;
    if (a.kind === 'websocket' && inOutage) continue;
    const when = `at ${((a.at - startedAt) / 1000).toFixed(1)} s`;
    violations.push(
      `${a.kind}: ${a.status || a.error} ${inOutage ? 'during' : 'outside'} the outage, ${when}`,
    );
  }

  // Flat RSS and file descriptors (after the first 10 % as warm-up).
  const flat: string[] = [];
  for (const index of gateways.keys()) {
    const mine = samples.filter((s) => s.gateway === index && s.at > startedAt + SECONDS * 100);
    const quarter = Math.max(1, Math.floor(mine.length / 4));
    const first = mine.slice(0, quarter);
    const last = mine.slice(-quarter);
    const rss = [median(first.map((s) => s.rssMb)), median(last.map((s) => s.rssMb))];
    const fds = [median(first.map((s) => s.fds)), median(last.map((s) => s.fds))];
    const peak = peakRssMb(gateways[index]?.proc.pid as number);
    flat.push(
      `gateway ${index === 0 ? 'a' : 'b'}: RSS ${rss[0]?.toFixed(1)} → ${rss[1]?.toFixed(1)} MB (peak ${peak.toFixed(1)} MB), open fds ${fds[0]} → ${fds[1]}`,
    );
    if ((rss[1] as number) - (rss[0] as number) > RSS_GROWTH_MB)
      violations.push(`gateway ${index}: RSS grew by more than ${RSS_GROWTH_MB} MB`);
    if ((fds[1] as number) - (fds[0] as number) > FD_GROWTH)
      violations.push(`gateway ${index}: open fds grew by more than ${FD_GROWTH}`);
  }

  // The summary.
  const byKind = new Map<string, Map<number, number>>();
  for (const a of answers) {
    const statuses = byKind.get(a.kind) ?? new Map<number, number>();
    statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
    byKind.set(a.kind, statuses);
  }
  const lines = [
    `soak: ${SECONDS} s, 2 gateways on one Redis (restarted at ${outage === undefined ? '—' : `${Math.round((outage.from - startedAt) / 1000)} s`}), Node ${process.version} ${imageNodeFlags().join(' ')}`,
    `${'kind'.padEnd(16)} answers by status`,
    ...[...byKind].map(
      ([kind, statuses]) =>
        `${kind.padEnd(16)} ${[...statuses]
          .sort(([a], [b]) => a - b)
          .map(([s, n]) => `${s || 'error'}: ${n}`)
          .join(', ')}`,
    ),
    `tokens ended: ${ended().length} (${['logout', 'password change', 'membership removal'].map((w) => `${w} ${ended().filter((t) => t.why === w).length}`).join(', ')}); signups: ${signups.length}`,
    ...flat,
    violations.length === 0 ? 'violations: none' : `violations (${violations.length}):`,
    ...summarize(violations).map((v) => `  ${v}`),
  ];
  process.stdout.write(`\n${lines.join('\n')}\n`);
  if (violations.length > 0) process.exitCode = 1;
}

function webSocketRoundTrip(gatewayUrl: string, token: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new WebSocket(`${gatewayUrl.replace(/^http/, 'ws')}/live/echo`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const done = (ok: boolean) => {
      clearTimeout(timer);
      socket.terminate();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), 5000);
    socket.on('open', () => socket.send('ping'));
    socket.on('message', (data) => done(String(data) === 'ping'));
    socket.on('unexpected-response', () => done(false));
    socket.on('error', () => done(false));
  });
}

function median(values: number[]): number {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

/** The same violation once, with a count. */
function summarize(violations: string[]): string[] {
  const counts = new Map<string, number>();
  for (const v of violations) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].map(([v, n]) => (n > 1 ? `${v} (×${n})` : v));
}

runMain('soak', main, teardown);
