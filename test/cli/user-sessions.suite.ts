/**
 * Issue 44: the operator's `session list EMAIL`, `session end SESSION_ID` and
 * `user show EMAIL` (the CLI as the harness runs it) against two running
 * gateways (`serve` processes) on one Redis, with refresh tokens on. A
 * session ended by the CLI is refused by both instances the moment the
 * command has returned — its refresh token and every access token of it —
 * and nothing else ends; a user agent (attacker-chosen text) reaches the
 * terminal escaped.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_PASSWORD } from '../../src/auth/passwords/no-password.js';
import { loadConfigFiles } from '../../src/config/index.js';
import { createCore, type Core } from '../../src/core/create-core.js';
import { basic, bearer } from '../support/gateway.js';
import { expectError } from '../support/expect-error.js';
import {
  type Case,
  type CliHarness,
  type Served,
  releaseCliHarness,
  sharedCliHarness,
} from './harness.js';

const TIMEOUT = 30_000;

const DORA = { email: 'dora@example.com', password: 'dora-password-1' };
const ERIK = { email: 'erik@example.com', password: 'erik-password-1' };
const SEED = [
  'users:',
  `  - { email: ${DORA.email}, password: "${DORA.password}" }`,
  `  - { email: ${ERIK.email}, password: "${ERIK.password}" }`,
  'tenants:',
  '  - { tenant_id: acme, name: Acme, cloud_region: eu-west-1, created_by: dora@example.com,',
  '      members: [dora@example.com, erik@example.com] }',
].join('\n');

interface Who {
  email: string;
  password: string;
}

interface Login {
  access_token: string;
  refresh_token: string;
  user_id: string;
  fid: string;
}

interface ListedSession {
  session_id: string;
  kind: string;
  tenant_id: string;
  created_at: number;
  last_seen_at: number;
  user_agent: string | null;
  ip: string | null;
  current: boolean;
}

let h: CliHarness;
/** The case's config with refresh tokens layered on. */
let kase: Case;
let gateways: Served[] = [];

beforeAll(async () => {
  h = await sharedCliHarness();
  const base = h.newCase();
  const layer = join(base.dir, 'refresh.yaml');
  writeFileSync(
    layer,
    // Browser sessions on plain HTTP (`secure: false`): the cookie is `tg_session`.
    'tokens: { refresh: { enabled: true } }\nsessions: { enabled: true, cookie: { secure: false } }\n',
  );
  kase = { ...base, c: [...base.c, '--config', layer] };
  await h.ok(['keys', 'add', ...kase.c]);
  await h.ok(['seed', h.writeSeed(kase, SEED), ...kase.c]);
  const started = await Promise.allSettled([h.serve(kase), h.serve(kase)]);
  for (const s of started) if (s.status === 'fulfilled') gateways.push(s.value);
  for (const s of started) if (s.status === 'rejected') throw s.reason;
}, TIMEOUT);

afterAll(async () => {
  for (const gw of gateways) expect(await gw.stop()).toBe(0);
  gateways = [];
  if (h !== undefined) await releaseCliHarness();
});

async function login(gw: Served, who: Who, userAgent = 'cli-sessions-test'): Promise<Login> {
  const res = await fetch(`${gw.base}/1/token?tenant_id=acme`, {
    headers: { authorization: basic(who.email, who.password), 'user-agent': userAgent },
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as Omit<Login, 'fid'>;
  return { ...body, fid: decodeJwt(body.access_token).fid as string };
}

const tenantRecord = (gw: Served, token: string) =>
  fetch(`${gw.base}/1/tenants/acme`, { headers: { authorization: bearer(token) } });

const refresh = (gw: Served, refreshToken: string) =>
  fetch(`${gw.base}/1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }),
  });

/** The core a store command builds, on the case's config: what a running gateway shares. */
async function withCore<T>(work: (core: Core) => Promise<T>): Promise<T> {
  const files = kase.c.filter((_, i) => kase.c[i - 1] === '--config');
  const { config } = await loadConfigFiles(files, h.env());
  const core = await createCore(config, pino({ level: 'silent' }));
  try {
    return await work(core);
  } finally {
    await core.close();
  }
}

const sessionsOf = async (email: string) =>
  (await h.ok<{ sessions: ListedSession[] }>(['session', 'list', email, ...kase.c])).sessions;

describe('session list', () => {
  it(
    "lists a user's logins on every instance, newest first, with what each sent and no secret",
    async () => {
      const [a, b] = gateways as [Served, Served];
      const first = await login(a, DORA, 'curl/8.5.0');
      const second = await login(b, DORA, 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0');
      const eriks = await login(a, ERIK);

      const run = await h.cli(['session', 'list', 'Dora@Example.com', ...kase.c]);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      const listed = JSON.parse(run.stdout) as {
        user_id: string;
        user_email: string;
        sessions: ListedSession[];
      };
      expect(listed).toMatchObject({ user_id: first.user_id, user_email: DORA.email });
      const ids = listed.sessions.map((s) => s.session_id);
      expect(ids).toEqual(expect.arrayContaining([first.fid, second.fid]));
      expect(ids).not.toContain(eriks.fid);
      expect(listed.sessions.find((s) => s.session_id === first.fid)).toMatchObject({
        kind: 'refresh',
        tenant_id: 'acme',
        user_agent: 'curl/8.5.0',
        ip: '127.0.0.1',
        current: false,
      });
      const created = listed.sessions.map((s) => s.created_at);
      expect(created).toEqual([...created].sort((x, y) => y - x));
      for (const secret of [first.refresh_token, first.access_token, second.refresh_token])
        expect(run.stdout).not.toContain(secret);

      expect(await h.fails(['session', 'list', 'nobody@example.com', ...kase.c])).toBe(
        'error: no user nobody@example.com\n',
      );
    },
    TIMEOUT,
  );

  it(
    'prints a user agent with control characters escaped: it cannot act on the terminal',
    async () => {
      const [a] = gateways as [Served, Served];
      // U+009B is CSI (C1): raw, a terminal would clear the screen with "CSI 2J".
      await login(a, ERIK, 'evil\u009b2J\u0085forged line');
      const run = await h.cli(['session', 'list', ERIK.email, ...kase.c]);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('evil\\u009b2J\\u0085forged line');
      expect(run.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/);
    },
    TIMEOUT,
  );
});

describe('session end', () => {
  it(
    'ends a refresh-token login on every instance before it returns: its refresh token and every access token refused; nothing else ends',
    async () => {
      const [a, b] = gateways as [Served, Served];
      const gone = await login(a, DORA);
      const kept = await login(b, DORA);
      const rotated = await refresh(b, gone.refresh_token);
      expect(rotated.status).toBe(200);
      const next = (await rotated.json()) as { access_token: string; refresh_token: string };
      // Every instance has judged (and cached) the tokens alive.
      for (const gw of gateways)
        for (const token of [gone.access_token, next.access_token, kept.access_token])
          expect((await tenantRecord(gw, token)).status).toBe(200);

      expect(await h.ok(['session', 'end', gone.fid, ...kase.c])).toEqual({
        session_id: gone.fid,
        ended: true,
      });

      for (const gw of gateways) {
        for (const token of [gone.access_token, next.access_token])
          await expectError(await tenantRecord(gw, token), 401, 'invalid_token');
        expect((await tenantRecord(gw, kept.access_token)).status).toBe(200);
      }
      await expectError(await refresh(a, next.refresh_token), 400, 'invalid_grant');
      const ids = (await sessionsOf(DORA.email)).map((s) => s.session_id);
      expect(ids).not.toContain(gone.fid);
      expect(ids).toContain(kept.fid);

      // Ended already, unknown or malformed: exit 1, naming it.
      for (const id of [gone.fid, 'aaaaaaaaaaaaaaaaaaaaaaaaaa', 'ses_nobody', 'x y'])
        expect(await h.fails(['session', 'end', id, ...kase.c])).toBe(
          `error: no live session ${id}\n`,
        );
    },
    TIMEOUT,
  );

  it(
    'records the end in the audit log, by the operator',
    async () => {
      const [a] = gateways as [Served, Served];
      const gone = await login(a, ERIK);
      await h.ok(['session', 'end', gone.fid, ...kase.c]);
      const events = (await h.auditOf(kase, 'acme'))
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(events).toContainEqual(
        expect.objectContaining({
          event: 'token_revoked',
          source: 'cli',
          family_id: gone.fid,
          user_id: gone.user_id,
          user_email: ERIK.email,
          tenant_id: 'acme',
          reason: 'ended_by_operator',
        }),
      );
    },
    TIMEOUT,
  );
});

describe('session end, a browser session', () => {
  it(
    'ends it on every instance before it returns: its cookie refused by both; audited by the operator',
    async () => {
      const [a] = gateways as [Served, Served];
      const { user_id: userId } = await login(a, DORA);
      const [ended, kept] = await withCore(async (core) => [
        await core.browserSessions.start({
          userId,
          tenantId: 'acme',
          userAgent: 'Firefox',
          ip: '203.0.113.9',
        }),
        await core.browserSessions.start({
          userId,
          tenantId: 'acme',
          userAgent: 'Safari',
          ip: '203.0.113.9',
        }),
      ]);
      const mySessions = (gw: Served, value: string) =>
        fetch(`${gw.base}/1/sessions`, { headers: { cookie: `tg_session=${value}` } });
      // Both instances have judged (and cached) the sessions alive.
      for (const gw of gateways)
        for (const s of [ended, kept])
          expect((await mySessions(gw, s.cookieValue)).status).toBe(200);
      const listed = await sessionsOf(DORA.email);
      expect(listed.find((s) => s.session_id === ended.session.sessionId)).toMatchObject({
        kind: 'browser',
        tenant_id: 'acme',
        user_agent: 'Firefox',
        ip: '203.0.113.9',
        current: false,
      });

      const id = ended.session.sessionId;
      expect(await h.ok(['session', 'end', id, ...kase.c])).toEqual({
        session_id: id,
        ended: true,
      });

      for (const gw of gateways) {
        await expectError(await mySessions(gw, ended.cookieValue), 401, 'invalid_token');
        expect((await mySessions(gw, kept.cookieValue)).status).toBe(200);
      }
      expect((await sessionsOf(DORA.email)).map((s) => s.session_id)).not.toContain(id);
      expect(await h.fails(['session', 'end', id, ...kase.c])).toBe(
        `error: no live session ${id}\n`,
      );
      const events = (await h.auditOf(kase, 'acme'))
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(events).toContainEqual(
        expect.objectContaining({
          event: 'session_ended',
          source: 'cli',
          session_id: id,
          reason: 'ended_by_operator',
        }),
      );
    },
    TIMEOUT,
  );
});

describe('user show', () => {
  it(
    'shows the account, memberships with roles, live sessions and factors, never a secret',
    async () => {
      const [a] = gateways as [Served, Served];
      const held = await login(a, DORA);
      const run = await h.cli(['user', 'show', DORA.email, ...kase.c]);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      const shown = JSON.parse(run.stdout) as Record<string, unknown> & {
        memberships: { tenant_id: string; type: string; role: string | null }[];
        sessions: ListedSession[];
      };
      expect(shown).toMatchObject({
        user_id: held.user_id,
        user_email: DORA.email,
        disabled: false,
        factors: [{ type: 'password' }],
      });
      expect(typeof shown.created_at).toBe('number');
      expect(shown.memberships).toContainEqual(
        expect.objectContaining({ tenant_id: 'acme', type: 'orgtenant', role: 'admin' }),
      );
      expect(shown.memberships).toContainEqual(
        expect.objectContaining({ tenant_id: shown.personal_tenant_id, type: 'usertenant' }),
      );
      expect(shown.sessions.map((s) => s.session_id)).toContain(held.fid);
      expect(run.stdout).not.toMatch(/\$2[ab]\$|tgr_|password_hash|digest/);

      await h.ok(['user', 'disable', ERIK.email, ...kase.c]);
      expect(await h.ok(['user', 'show', ERIK.email, ...kase.c])).toMatchObject({
        disabled: true,
        factors: [{ type: 'password' }],
        // Disabling ended every login of his.
        sessions: [],
      });
      expect(await h.fails(['user', 'show', 'nobody@example.com', ...kase.c])).toBe(
        'error: no user nobody@example.com\n',
      );
    },
    TIMEOUT,
  );

  it(
    "names the tenant IdP that created a user, and no password they don't have",
    async () => {
      const issuer = 'https://idp.acme.example/realms/acme';
      const now = Math.floor(Date.now() / 1000);
      await withCore((core) =>
        core.store.users.createUser({
          id: 'u-fed-1',
          email: 'fay@acme.example',
          passwordHash: NO_PASSWORD,
          createdAt: now,
          createdByIdp: { tenantId: 'acme', issuer },
          personalTenant: {
            tenantId: 'fay-personal',
            type: 'usertenant',
            name: 'Fay',
            createdAt: now,
            modifiedAt: now,
            cloudRegion: 'eu-west-1',
            createdBy: 'fay@acme.example',
          },
        }),
      );
      expect(await h.ok(['user', 'show', 'fay@acme.example', ...kase.c])).toMatchObject({
        user_id: 'u-fed-1',
        disabled: false,
        factors: [{ type: 'idp', tenant_id: 'acme', issuer }],
        sessions: [],
      });
    },
    TIMEOUT,
  );
});
