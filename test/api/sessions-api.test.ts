/**
 * Issue 44, a user's own sessions through the API (`GET /1/sessions`,
 * `DELETE /1/sessions/{id}`) on a running gateway (in-memory store): both
 * kinds listed with `current`, what each login sent (`User-Agent`, address),
 * a refresh family ended with its refresh and access tokens, another user's
 * session answered as an unknown one and left alive, a machine client
 * refused.
 */
import { decodeJwt } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { basic, bearer } from '../support/gateway.js';
import { expectError } from '../support/expect-error.js';
import { clientToken, makeClient } from '../support/machine-client.js';
import { ALICE, BOB } from '../support/identity-fixture.js';
import { fixtureSuite } from '../support/fixture-suite.js';

const s = fixtureSuite({}, () => ({ tokens: { refresh: { enabled: true } } }));
let url: string;
beforeAll(() => {
  url = s.gw.url;
});

interface Login {
  access_token: string;
  refresh_token: string;
  user_id: string;
  /** The access token's refresh family: the session's id. */
  fid: string;
}

interface Listed {
  session_id: string;
  kind: string;
  tenant_id: string;
  created_at: number;
  last_seen_at: number;
  user_agent: string | null;
  ip: string | null;
  current: boolean;
}

async function login(
  who: { email: string; password: string },
  tenantId: string,
  userAgent = 'sessions-api-test',
): Promise<Login> {
  const res = await fetch(`${url}/1/token?tenant_id=${tenantId}`, {
    headers: { authorization: basic(who.email, who.password), 'user-agent': userAgent },
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as Omit<Login, 'fid'>;
  return { ...body, fid: decodeJwt(body.access_token).fid as string };
}

const list = (token: string) =>
  fetch(`${url}/1/sessions`, { headers: { authorization: bearer(token) } });

async function listed(token: string): Promise<Listed[]> {
  const res = await list(token);
  expect(res.status).toBe(200);
  expect(res.headers.get('cache-control')).toBe('no-store');
  return ((await res.json()) as { sessions: Listed[] }).sessions;
}

const end = (token: string, sessionId: string) =>
  fetch(`${url}/1/sessions/${encodeURIComponent(sessionId)}`, {
    method: 'DELETE',
    headers: { authorization: bearer(token) },
  });

const refresh = (refreshToken: string) =>
  fetch(`${url}/1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }),
  });

const tenantWith = (token: string) =>
  fetch(`${url}/1/tenants/current`, { headers: { authorization: bearer(token) } });

describe('GET /1/sessions with a bearer token', () => {
  it("lists the caller's logins newest first, the caller's own marked current, with what each login sent", async () => {
    const long = `Mozilla/5.0 ${'x'.repeat(400)}`;
    const first = await login(ALICE, 'acme', 'curl/8.5.0');
    const second = await login(ALICE, 'acme', long);
    const bobs = await login(BOB, 'acme');

    const sessions = await listed(first.access_token);
    const ids = sessions.map((s) => s.session_id);
    expect(ids).toContain(first.fid);
    expect(ids).toContain(second.fid);
    expect(ids).not.toContain(bobs.fid);
    const one = sessions.find((s) => s.session_id === first.fid);
    const two = sessions.find((s) => s.session_id === second.fid);
    expect(one).toMatchObject({
      kind: 'refresh',
      tenant_id: 'acme',
      user_agent: 'curl/8.5.0',
      ip: '127.0.0.1',
      current: true,
    });
    expect(one?.last_seen_at).toBe(one?.created_at);
    expect(two).toMatchObject({ current: false, user_agent: long.slice(0, 256) });
    expect(sessions.filter((s) => s.current)).toHaveLength(1);
    const created = sessions.map((s) => s.created_at);
    expect(created).toEqual([...created].sort((a, b) => b - a));
    // Never a secret: no refresh token, no digest.
    const text = JSON.stringify(sessions);
    expect(text).not.toContain(first.refresh_token);
    expect(text).not.toMatch(/digest|tgr_/);

    // The other login's token marks its own family.
    const fromSecond = await listed(second.access_token);
    expect(fromSecond.find((s) => s.current)?.session_id).toBe(second.fid);
  });

  it('shows a refresh as the last time seen', async () => {
    const first = await login(ALICE, 'acme');
    const res = await refresh(first.refresh_token);
    expect(res.status).toBe(200);
    const refreshed = (await res.json()) as { access_token: string };
    const mine = (await listed(refreshed.access_token)).find((s) => s.session_id === first.fid);
    expect(mine?.current).toBe(true);
    expect(mine?.last_seen_at).toBeGreaterThanOrEqual(mine?.created_at as number);
  });

  it('refuses no credential, a bad token, and a machine client', async () => {
    await expectError(await fetch(`${url}/1/sessions`), 401, 'invalid_token');
    await expectError(await list('x.y.z'), 401, 'invalid_token');
    const machine = await makeClient(s.gw.gateway.store, 'acme', []);
    const token = await clientToken(url, machine);
    await expectError(await list(token), 403, 'forbidden');
    await expectError(await end(token, 'aaaaaaaaaaaaaaaaaaaaaaaaaa'), 403, 'forbidden');
  });
});

describe('DELETE /1/sessions/{id} with a bearer token', () => {
  it('ends a family of the caller: its refresh token and every access token of it refused at once', async () => {
    const keep = await login(ALICE, 'acme');
    const gone = await login(ALICE, 'acme');
    // Verified (and cached) before it ends.
    expect((await tenantWith(gone.access_token)).status).toBe(200);
    const rotated = await refresh(gone.refresh_token);
    expect(rotated.status).toBe(200);
    const next = (await rotated.json()) as { access_token: string; refresh_token: string };

    const res = await end(keep.access_token, gone.fid);
    expect(res.status).toBe(204);

    await expectError(await tenantWith(gone.access_token), 401, 'invalid_token');
    await expectError(await tenantWith(next.access_token), 401, 'invalid_token');
    await expectError(await refresh(next.refresh_token), 400, 'invalid_grant');
    expect((await tenantWith(keep.access_token)).status).toBe(200);
    const ids = (await listed(keep.access_token)).map((s) => s.session_id);
    expect(ids).not.toContain(gone.fid);
    expect(ids).toContain(keep.fid);
    // Ended already: as unknown.
    await expectError(await end(keep.access_token, gone.fid), 404, 'not_found');
  });

  it('ends the caller’s own current session too', async () => {
    const self = await login(ALICE, 'acme');
    expect((await end(self.access_token, self.fid)).status).toBe(204);
    await expectError(await tenantWith(self.access_token), 401, 'invalid_token');
    await expectError(await refresh(self.refresh_token), 400, 'invalid_grant');
  });

  it("answers another user's session as an unknown one, and ends nothing", async () => {
    const alice = await login(ALICE, 'acme');
    const bob = await login(BOB, 'acme');
    const theirs = await end(alice.access_token, bob.fid);
    const unknown = await end(alice.access_token, 'aaaaaaaaaaaaaaaaaaaaaaaaaa');
    const malformed = await end(alice.access_token, 'not a session id');
    const browserLike = await end(alice.access_token, 'ses_nobody');
    const bodies = [];
    for (const res of [theirs, unknown, malformed, browserLike])
      bodies.push(await expectError(res, 404, 'not_found'));
    expect(new Set(bodies.map((b) => JSON.stringify(b))).size).toBe(1);

    expect((await tenantWith(bob.access_token)).status).toBe(200);
    expect((await refresh(bob.refresh_token)).status).toBe(200);
    expect((await listed(bob.access_token)).map((s) => s.session_id)).toContain(bob.fid);
  });

  it('refuses a request without credentials, ending nothing', async () => {
    const alice = await login(ALICE, 'acme');
    const res = await fetch(`${url}/1/sessions/${alice.fid}`, { method: 'DELETE' });
    await expectError(res, 401, 'invalid_token');
    expect((await tenantWith(alice.access_token)).status).toBe(200);
  });
});
