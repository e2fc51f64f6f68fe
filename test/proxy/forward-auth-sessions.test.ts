/**
 * Issue 44: docs/browser-sessions.md's nginx block, run as written (only the
 * ports moved) in a real nginx in front of a real app (the recording
 * upstream), asking a real gateway with the page's config: a page load
 * without a session is redirected to the sign-in page on the app's own host,
 * a script's request gets 401; with the session cookie the app gets the
 * identity headers and the `Cookie` without the session's; an unsafe request
 * from another site is refused 403 before the app sees it.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureSuite } from '../support/fixture-suite.js';
import { ALICE } from '../support/identity-fixture.js';
import { blocks, section } from '../support/markdown.js';
import { startNginx, type TestNginx } from '../support/nginx.js';
import { startRecordingUpstream } from '../support/recording-upstream.js';

const PAGE = readFileSync(new URL('../../docs/browser-sessions.md', import.meta.url), 'utf8');
const NGINX = section(PAGE, 'Behind nginx (`auth_request`) with cookies');
const NAME = '__Host-tg_session';

const s = fixtureSuite({ app: startRecordingUpstream }, () => {
  const config = parse(blocks(NGINX, 'yaml')[0] as string) as Record<string, unknown>;
  delete config.listen;
  return config;
});
let nginx: TestNginx;

beforeAll(async () => {
  const block = (blocks(NGINX, 'nginx')[0] as string)
    .replaceAll('127.0.0.1:8080', s.fx.gw.url.replace('http://', ''))
    .replaceAll('127.0.0.1:9001', s.up.app.url.replace('http://', ''));
  nginx = await startNginx(block);
}, 60_000);

afterAll(async () => {
  await nginx?.stop();
});

async function signedIn(): Promise<string> {
  const alice = await s.fx.gw.gateway.store.users.findUserByEmail(ALICE.email);
  const started = await s.fx.gw.gateway.browserSessions.start({
    userId: alice?.id as string,
    tenantId: 'acme',
    userAgent: 'vitest',
    ip: '127.0.0.1',
  });
  return started.cookieValue;
}

async function through(path: string, headers: Record<string, string>, method = 'GET') {
  const before = s.up.app.requests.length;
  const res = await fetch(`http://127.0.0.1:${nginx.port}${path}`, {
    method,
    headers,
    redirect: 'manual',
  });
  await res.arrayBuffer();
  const reached = s.up.app.requests.length > before ? s.up.app.requests.at(-1) : undefined;
  return { status: res.status, location: res.headers.get('location'), reached };
}

describe('behind nginx as docs/browser-sessions.md configures it', () => {
  const page = { accept: 'text/html', 'sec-fetch-mode': 'navigate' };

  it('a page load without a session is sent to sign in on the same host, back to its URI', async () => {
    const seen = await through('/app/orders?id=7&b=/', page);
    expect(seen.status, nginx.errorLog()).toBe(302);
    expect(seen.location).toMatch(
      new RegExp(
        `/1/sign-in\\?return_to=${encodeURIComponent('/app/orders?id=7&b=/').replaceAll('%', '\\%')}$`,
      ),
    );
    expect(new URL(seen.location as string, 'http://x').host).toMatch(/^(x|127\.0\.0\.1:\d+)$/);
    expect(seen.reached).toBeUndefined();
  });

  it("a script's request without a session gets 401", async () => {
    const seen = await through('/app/x', { accept: 'application/json' });
    expect(seen.status).toBe(401);
    expect(seen.reached).toBeUndefined();
  });

  it('with the cookie: the identity headers, and the Cookie without the session cookie', async () => {
    const value = await signedIn();
    const seen = await through('/app/x', { ...page, cookie: `a=1; ${NAME}=${value}; b=2` });
    expect(seen.status).toBe(200);
    expect(seen.reached?.headers).toMatchObject({
      'x-tenant-id': 'acme',
      'x-user-email': ALICE.email,
      cookie: 'a=1; b=2',
    });
    expect(JSON.stringify(seen.reached?.headers)).not.toContain(value);
    const alone = await through('/app/y', { cookie: `${NAME}=${value}` });
    expect(alone.status).toBe(200);
    expect(alone.reached?.headers).not.toHaveProperty('cookie');
  });

  it('a cross-site POST with the cookie is refused 403, a same-origin one passes', async () => {
    const cookie = `${NAME}=${await signedIn()}`;
    const refused = await through('/app/x', { cookie, 'sec-fetch-site': 'cross-site' }, 'POST');
    expect(refused.status).toBe(403);
    expect(refused.reached).toBeUndefined();
    const passed = await through('/app/x', { cookie, 'sec-fetch-site': 'same-origin' }, 'POST');
    expect(passed.status).toBe(200);
  });
});
