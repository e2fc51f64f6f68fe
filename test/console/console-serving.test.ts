/**
 * Issue 46, the console as the gateway serves it (in-memory store, real
 * sockets): the shell only with a live session, else sent to sign in and
 * back; its headers (CSP, no framing, no caching); its hashed assets cached
 * for a year; the API calls it makes that are its own — who the caller is,
 * the tenant switch, a tenant's audit events — with their rules.
 */
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { configErrorOf } from '../support/config-problems.js';
import { consoleCall, sessionCookieOf } from '../support/console-session.js';
import { bearer } from '../support/gateway.js';
import { fixtureSuite } from '../support/fixture-suite.js';
import { ALICE, BOB, tokenFor } from '../support/identity-fixture.js';
import { clientToken, makeClient } from '../support/machine-client.js';
import { SESSIONS } from '../support/sign-in-page.js';

const s = fixtureSuite({}, () => ({ sessions: SESSIONS, console: { enabled: true } }));
let url: string;
let alice: string;
beforeAll(async () => {
  url = s.gw.url;
  alice = await sessionCookieOf(url, ALICE, 'acme');
});

describe('the console shell', () => {
  it('without a session: 302 to sign in, back to the deep link after', async () => {
    const res = await fetch(`${url}/console/tenants/acme/members?x=1`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(
      `/1/sign-in?return_to=${encodeURIComponent('/console/tenants/acme/members?x=1')}&tenant_id=acme`,
    );
    const forged = await fetch(`${url}/console/`, {
      redirect: 'manual',
      headers: {
        cookie: 'tg_session=ses_AAAAAAAAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB',
      },
    });
    expect(forged.status).toBe(302);
  });

  it('with a session: the shell, its script and stylesheet from this origin, never framed or cached', async () => {
    const res = await fetch(`${url}/console/account`, { headers: { cookie: alice } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toBe(
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    );
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = await res.text();
    const script = /<script type="module" src="(\/console\/assets\/app\.[\w-]+\.js)">/.exec(
      html,
    )?.[1];
    const style = /<link rel="stylesheet" href="(\/console\/assets\/app\.[\w-]+\.css)">/.exec(
      html,
    )?.[1];
    expect(script).toBeDefined();
    expect(style).toBeDefined();
    expect(html).not.toMatch(/<script>|\sstyle=|\son[a-z]+=/);

    const js = await fetch(`${url}${script}`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const etag = js.headers.get('etag') as string;
    expect((await fetch(`${url}${script}`, { headers: { 'if-none-match': etag } })).status).toBe(
      304,
    );
    expect((await fetch(`${url}${style}`)).headers.get('content-type')).toBe(
      'text/css; charset=utf-8',
    );
    expect((await fetch(`${url}/console/assets/app.nothere0000.js`)).status).toBe(404);
  });

  it('all its JavaScript is at most 100 KB gzipped (issue 46), one script with no chunk of its own', async () => {
    const html = await (
      await fetch(`${url}/console/account`, { headers: { cookie: alice } })
    ).text();
    const scripts = [...html.matchAll(/<script[^>]* src="([^"]+)"/g)].map((m) => m[1] as string);
    expect(scripts).toHaveLength(1);
    const js = Buffer.from(await (await fetch(`${url}${scripts[0]}`)).arrayBuffer());
    // The build emits one file: no dynamic import could fetch more at run time.
    expect(js.toString('utf8')).not.toMatch(/\bimport\s*\(/);
    expect(gzipSync(js, { level: 9 }).length).toBeLessThanOrEqual(100 * 1024);
  });

  it('a deep link whose tenant is no UTF-8: sent to sign in without a tenant, never a 500', async () => {
    const res = await fetch(`${url}/console/tenants/%E0/members`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(
      `/1/sign-in?return_to=${encodeURIComponent('/console/tenants/%E0/members')}`,
    );
  });

  it('two session cookies (one tossed by a sibling host) are refused, not looped through sign-in', async () => {
    const res = await fetch(`${url}/console/`, {
      redirect: 'manual',
      headers: { cookie: `${alice}; ${alice.replace(/\.[^.]*$/, '.x')}` },
    });
    expect(res.status).toBe(401);
  });
});

describe('GET /1/users/current', () => {
  it('names the user, the session tenant and role, and every tenant with its role', async () => {
    const res = await consoleCall(url, alice, 'GET', '/1/users/current');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const me = (await res.json()) as Record<string, unknown>;
    expect(me).toMatchObject({
      user_email: ALICE.email,
      tenant_id: 'acme',
      tenant_name: 'Acme',
      tenant_type: 'orgtenant',
      role: 'admin',
    });
    expect(
      (me['tenants'] as { tenant_id: string; role: string }[]).map((t) => [t.tenant_id, t.role]),
    ).toEqual(expect.arrayContaining([['acme', 'admin']]));
  });

  it('takes a bearer token too, and refuses a machine client and no credential', async () => {
    const bob = await tokenFor(url, BOB, 'globex');
    const res = await fetch(`${url}/1/users/current`, {
      headers: { authorization: bearer(bob.access_token as string) },
    });
    expect(await res.json()).toMatchObject({
      user_email: BOB.email,
      tenant_id: 'globex',
      role: 'admin',
    });
    const client = await makeClient(s.gw.gateway.store, 'acme', []);
    const machine = await fetch(`${url}/1/users/current`, {
      headers: { authorization: bearer(await clientToken(url, client)) },
    });
    expect(machine.status).toBe(403);
    expect((await fetch(`${url}/1/users/current`)).status).toBe(401);
  });
});

describe('POST /1/sessions: the session moved to another tenant of the user', () => {
  it("a member's switch: a new cookie for the tenant, the old session ended", async () => {
    const bob = await sessionCookieOf(url, BOB, 'acme');
    const res = await consoleCall(url, bob, 'POST', '/1/sessions', { tenant_id: 'globex' });
    expect(res.status).toBe(204);
    const moved = (res.headers.getSetCookie()[0] as string).split(';')[0] as string;
    expect(moved).toMatch(/^tg_session=ses_/);
    const me = await consoleCall(url, moved, 'GET', '/1/users/current');
    expect(await me.json()).toMatchObject({ tenant_id: 'globex', role: 'admin' });
    expect((await consoleCall(url, bob, 'GET', '/1/users/current')).status).toBe(401);
  });

  it('never outlives the sign-in: the moved session ends when the old one would have', async () => {
    const bob = await sessionCookieOf(url, BOB, 'acme');
    const store = s.gw.gateway.store.browserSessions;
    const old = await store.getBrowserSession(bob.split('=')[1]?.split('.')[0] as string);
    // Signed in long ago: 90 seconds of the absolute timeout left.
    const endsAt = Math.floor(Date.now() / 1000) + 90;
    await store.removeBrowserSession(old!.sessionId);
    await store.createBrowserSession({ ...old!, absoluteExpiresAt: endsAt });
    const res = await consoleCall(url, bob, 'POST', '/1/sessions', { tenant_id: 'globex' });
    expect(res.status).toBe(204);
    const line = res.headers.getSetCookie()[0] as string;
    const moved = await store.getBrowserSession(line.split('=')[1]?.split('.')[0] as string);
    expect(moved).toMatchObject({ tenantId: 'globex', absoluteExpiresAt: endsAt });
    expect(Number(/Max-Age=(\d+)/.exec(line)?.[1])).toBeLessThanOrEqual(90);
    // Moving back and forth gains nothing either.
    const movedCookie = line.split(';')[0] as string;
    const back = await consoleCall(url, movedCookie, 'POST', '/1/sessions', { tenant_id: 'acme' });
    const again = (back.headers.getSetCookie()[0] as string).split('=')[1]?.split('.')[0];
    expect((await store.getBrowserSession(again as string))?.absoluteExpiresAt).toBe(endsAt);
  });

  it('a tenant the user is not in: 403 tenant_access_denied, and the old session lives on', async () => {
    const cookie = await sessionCookieOf(url, ALICE, 'acme');
    const res = await consoleCall(url, cookie, 'POST', '/1/sessions', { tenant_id: 'globex' });
    expect(res.status).toBe(403);
    expect((await res.json()) as object).toMatchObject({ error: 'tenant_access_denied' });
    expect((await consoleCall(url, cookie, 'GET', '/1/users/current')).status).toBe(200);
  });

  it('from another site: 403 csrf_refused, nothing changed; with a bearer token: 403 forbidden', async () => {
    const cookie = await sessionCookieOf(url, BOB, 'acme');
    const res = await consoleCall(
      url,
      cookie,
      'POST',
      '/1/sessions',
      { tenant_id: 'globex' },
      {
        'sec-fetch-site': 'cross-site',
      },
    );
    expect(res.status).toBe(403);
    expect((await res.json()) as object).toMatchObject({ error: 'csrf_refused' });
    expect(await (await consoleCall(url, cookie, 'GET', '/1/users/current')).json()).toMatchObject({
      tenant_id: 'acme',
    });
    const bob = await tokenFor(url, BOB, 'acme');
    const token = await fetch(`${url}/1/sessions`, {
      method: 'POST',
      headers: {
        authorization: bearer(bob.access_token as string),
        'content-type': 'application/json',
      },
      body: JSON.stringify({ tenant_id: 'globex' }),
    });
    expect(token.status).toBe(403);
  });
});

describe("GET /1/tenants/{t}/audit: a tenant's events for its admins", () => {
  let admin: Record<string, string>;
  beforeAll(async () => {
    admin = { authorization: bearer((await tokenFor(url, ALICE, 'acme')).access_token as string) };
    const globex = {
      authorization: bearer((await tokenFor(url, BOB, 'globex')).access_token as string),
    };
    const create = (auth: Record<string, string>, tenant: string, name: string) =>
      fetch(`${url}/1/tenants/${tenant}/clients`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name, scopes: [] }),
      }).then((res) => expect(res.status).toBe(201));
    for (const name of ['one', 'two', 'three']) await create(admin, 'acme', name);
    await create(globex, 'globex', 'theirs');
  });
  const audit = (path: string) => fetch(`${url}${path}`, { headers: admin });

  it("newest first, the tenant's own only, filtered by type, paged by cursor", async () => {
    const page = await audit('/1/tenants/acme/audit?type=client_created&limit=2');
    expect(page.status).toBe(200);
    const first = (await page.json()) as {
      events: Record<string, unknown>[];
      next: string;
      types: string[];
    };
    expect(first.events).toHaveLength(2);
    expect(
      first.events.every((e) => e['event'] === 'client_created' && e['tenant_id'] === 'acme'),
    ).toBe(true);
    expect(first.types).toContain('client_created');
    expect((first.events[0]!['time'] as string) > (first.events[1]!['time'] as string)).toBe(true);
    const rest = await audit(
      `/1/tenants/acme/audit?type=client_created&limit=50&before=${first.next}`,
    );
    const second = (await rest.json()) as {
      events: Record<string, unknown>[];
      next: string | null;
    };
    expect(second.events).toHaveLength(1);
    expect(second.events.some((e) => e['name'] === 'theirs')).toBe(false);
    expect(second.next).toBeNull();
    const times = [...first.events, ...second.events].map((e) => e['time'] as string);
    expect(times).toEqual([...times].sort().reverse());
  });

  it("another tenant's path, a member who is not admin, bad input: refused", async () => {
    const other = await audit('/1/tenants/globex/audit');
    expect(other.status).toBe(403);
    expect((await other.json()) as object).toMatchObject({ error: 'tenant_mismatch' });
    const bob = {
      authorization: bearer((await tokenFor(url, BOB, 'acme')).access_token as string),
    };
    const member = await fetch(`${url}/1/tenants/acme/audit`, { headers: bob });
    expect(member.status).toBe(403);
    expect((await member.json()) as object).toMatchObject({ error: 'forbidden' });
    expect((await audit('/1/tenants/acme/audit?limit=0')).status).toBe(400);
    expect((await audit('/1/tenants/acme/audit?before=x')).status).toBe(400);
  });
});

describe('config', () => {
  it('the console needs sessions, and owns /console', () => {
    expect(configErrorOf('console: { enabled: true }').problems).toEqual([
      'console.enabled: needs sessions.enabled: true (the console is used with the browser session)',
    ]);
    expect(
      configErrorOf(
        'sessions: { enabled: true }\nconsole: { enabled: true }\nroutes: [{ prefix: /console/x, upstream: "http://127.0.0.1:1" }]',
      ).problems,
    ).toEqual(['routes[0].prefix: is the console’s (console.enabled): choose another prefix']);
  });
});
