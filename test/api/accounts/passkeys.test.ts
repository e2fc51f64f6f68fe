/**
 * Passkeys over HTTP (issue 45), without a browser: a software authenticator
 * (`test/support/soft-authenticator.ts`) answers the ceremonies as a
 * platform authenticator would, or as an attacker would. Registration takes
 * the session cookie only, from the gateway's own origin, for the caller's
 * own user; a registration verifies against this session's challenge, once,
 * `publicUrl`'s origin and user verification. The sign-in page's passkey
 * step signs in as both factors, and refuses a replay, another browser's
 * challenge, another user's handle, a removed passkey, a counter gone
 * backwards, a disabled or removed user. A refused passkey spends a point of
 * its address's login budget (`limits.login.perIp`, shared with passwords),
 * never an e-mail's.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { disabledHash } from '../../../src/auth/revocation/disabled.js';
import { bearer } from '../../support/gateway.js';
import {
  ALICE,
  BOB,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../../support/identity-fixture.js';
import {
  PASSKEY_CONFIG,
  PASSKEY_ORIGIN,
  passkeyChallenge,
  passkeyRequest,
  postPasskeySignIn,
  registerSoftPasskey,
  sessionOf,
  signInWithSoftPasskey,
} from '../../support/passkey-requests.js';
import {
  cookiePair,
  openSignIn,
  postForm,
  SESSIONS,
  setCookie,
  signIn,
} from '../../support/sign-in-page.js';
import {
  assertPasskey,
  createPasskey,
  type SoftPasskey,
} from '../../support/soft-authenticator.js';

let fx: IdentityFixture;
let base: string;
let alice: string;
let bob: string;

beforeAll(async () => {
  fx = await startMemoryIdentityFixture(PASSKEY_CONFIG);
  base = fx.gw.url;
  alice = await sessionOf(base, ALICE, 'acme');
  bob = await sessionOf(base, BOB, 'globex');
}, 30_000);
afterAll(async () => {
  await fx?.close();
});

const json = async (res: Response) => (await res.json()) as Record<string, unknown>;
const errorOf = async (res: Response) => (await json(res)).error;

describe('registering a passkey', () => {
  it('answers creation options for a discoverable, user-verified credential on publicUrl', async () => {
    const res = await passkeyRequest(base, 'POST', '/options', alice);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const options = await json(res);
    expect(options.rp).toEqual({ id: 'gw.test', name: 'tenant-gateway' });
    expect(options.authenticatorSelection).toEqual(
      expect.objectContaining({ residentKey: 'required', userVerification: 'required' }),
    );
    expect(options.attestation).toBe('none');
    expect((options.user as { name: string }).name).toBe(ALICE.email);
    expect(options.challenge).toMatch(/^[A-Za-z0-9_-]{20,}$/);
  });

  it('registers, lists, excludes what is registered, and removes', async () => {
    const { passkey, res } = await registerSoftPasskey(base, alice);
    expect(res.status).toBe(201);
    const created = await json(res);
    expect(created).toEqual({
      passkey_id: expect.stringMatching(/^pk_/),
      name: 'Laptop',
      created_at: expect.any(Number),
    });
    const listed = await json(await passkeyRequest(base, 'GET', '', alice));
    expect(listed.passkeys).toContainEqual({ ...created, last_used_at: null });
    const options = await json(await passkeyRequest(base, 'POST', '/options', alice));
    expect(options.excludeCredentials).toContainEqual(
      expect.objectContaining({ id: passkey.credentialId.toString('base64url') }),
    );
    const removed = await passkeyRequest(base, 'DELETE', `/${created.passkey_id as string}`, alice);
    expect(removed.status).toBe(204);
    const again = await passkeyRequest(base, 'DELETE', `/${created.passkey_id as string}`, alice);
    expect(again.status).toBe(404);
  });

  it('takes the session cookie only: none, or a bearer token, is 401', async () => {
    expect((await passkeyRequest(base, 'POST', '/options', undefined)).status).toBe(401);
    const token = (await tokenFor(base, ALICE, 'acme')).access_token;
    const withBearer = await passkeyRequest(base, 'GET', '', undefined, undefined, {
      authorization: bearer(token),
    });
    expect(withBearer.status).toBe(401);
    expect(await errorOf(withBearer)).toBe('invalid_token');
  });

  it('refuses an unsafe request from another origin (csrf_refused), changing nothing', async () => {
    const crossSite = { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' };
    const options = await passkeyRequest(base, 'POST', '/options', alice, undefined, crossSite);
    expect(options.status).toBe(403);
    expect(await errorOf(options)).toBe('csrf_refused');
    const { res } = await registerSoftPasskey(base, alice);
    const { passkey_id: id } = await json(res);
    const removal = await passkeyRequest(base, 'DELETE', `/${id as string}`, alice, undefined, {
      'sec-fetch-site': '',
      origin: 'https://evil.example',
    });
    expect(removal.status).toBe(403);
    expect(await errorOf(removal)).toBe('csrf_refused');
    const listed = await json(await passkeyRequest(base, 'GET', '', alice));
    expect((listed.passkeys as { passkey_id: string }[]).map((p) => p.passkey_id)).toContain(id);
  });

  it("never touches another user's: their path is 403, their passkey's id 404", async () => {
    const { res } = await registerSoftPasskey(base, bob);
    const { passkey_id: bobs } = await json(res);
    const bobId = (await tokenFor(base, BOB, 'globex')).user_id as string;
    const path = await fetch(`${base}/1/users/${bobId}/passkeys`, { headers: { cookie: alice } });
    expect(path.status).toBe(403);
    expect(await errorOf(path)).toBe('forbidden');
    const removal = await passkeyRequest(base, 'DELETE', `/${bobs as string}`, alice);
    expect(removal.status).toBe(404);
    const listed = await json(await passkeyRequest(base, 'GET', '', bob));
    expect((listed.passkeys as { passkey_id: string }[]).map((p) => p.passkey_id)).toContain(bobs);
  });

  it("refuses another session's challenge, a used one, another origin, no user verification", async () => {
    const register = async (cookie: string, options: unknown, tamper = {}) => {
      const { response } = createPasskey(options as never, PASSKEY_ORIGIN, tamper);
      return passkeyRequest(base, 'POST', '', cookie, { response });
    };
    const bobs = await json(await passkeyRequest(base, 'POST', '/options', bob));
    expect((await register(alice, bobs)).status).toBe(400);
    const mine = await json(await passkeyRequest(base, 'POST', '/options', alice));
    const evil = await register(alice, mine, { origin: 'https://evil.example' });
    expect(evil.status).toBe(400);
    expect(await errorOf(evil)).toBe('invalid_request');
    // The failed answer used the challenge up: even a good one now finds none.
    expect((await register(alice, mine)).status).toBe(400);
    const fresh = await json(await passkeyRequest(base, 'POST', '/options', alice));
    expect((await register(alice, fresh, { verified: false })).status).toBe(400);
    const last = await json(await passkeyRequest(base, 'POST', '/options', alice));
    const { response } = createPasskey(last as never, PASSKEY_ORIGIN);
    expect((await passkeyRequest(base, 'POST', '', alice, { response })).status).toBe(201);
    const replayed = await passkeyRequest(base, 'POST', '', alice, { response });
    expect(replayed.status).toBe(400);
  });
});

describe('signing in with a passkey on the sign-in page', () => {
  let passkey: SoftPasskey;
  beforeAll(async () => {
    passkey = (await registerSoftPasskey(base, alice)).passkey;
  });

  it('signs in as both factors: the tenant step, a session, return_to', async () => {
    const res = await signInWithSoftPasskey(base, passkey, { tenant_id: 'acme' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/app');
    const session = cookiePair(res, 'tg_session');
    const sessions = await fetch(`${base}/1/sessions`, { headers: { cookie: session } });
    expect(sessions.status).toBe(200);
    const listed = await json(await passkeyRequest(base, 'GET', '', session));
    expect(
      (listed.passkeys as { last_used_at: number | null }[]).some((p) => p.last_used_at !== null),
    ).toBe(true);
  });

  it('asks a user of several tenants which one, as after a password', async () => {
    const res = await signInWithSoftPasskey(base, passkey);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('Which organisation do you sign in to?');
  });

  it("refuses a replayed assertion, another browser's challenge, a signature for another challenge", async () => {
    const ceremony = await passkeyChallenge(base);
    const credential = assertPasskey(passkey, ceremony.challenge, PASSKEY_ORIGIN);
    const first = await postPasskeySignIn(base, ceremony, credential, { tenant_id: 'acme' });
    expect(first.status).toBe(303);
    const replay = await postPasskeySignIn(base, ceremony, credential, { tenant_id: 'acme' });
    expect(replay.status).toBe(401);
    expect(replay.headers.get('set-cookie') ?? '').not.toContain('tg_session=');
    // A program asking for JSON gets the code the page puts in words.
    const asJson = await postForm(
      base,
      '/1/sign-in',
      { csrf_token: ceremony.token, step: 'passkey', credential: JSON.stringify(credential) },
      { cookie: ceremony.preSession, headers: { accept: 'application/json' } },
    );
    expect(asJson.status).toBe(401);
    expect(await errorOf(asJson)).toBe('invalid_credentials');

    const mine = await passkeyChallenge(base);
    const theirs = await passkeyChallenge(base);
    const forTheirs = assertPasskey(passkey, theirs.challenge, PASSKEY_ORIGIN);
    expect((await postPasskeySignIn(base, mine, forTheirs)).status).toBe(401);
    const other = await passkeyChallenge(base);
    const wrongChallenge = assertPasskey(passkey, other.challenge, PASSKEY_ORIGIN, {
      challenge: Buffer.from('another challenge').toString('base64url'),
    });
    expect((await postPasskeySignIn(base, other, wrongChallenge)).status).toBe(401);
  });

  it("refuses another user's handle, another origin, no user verification, a counter gone backwards", async () => {
    const bobId = (await tokenFor(base, BOB, 'globex')).user_id as string;
    const tampers = [
      { userHandle: Buffer.from(bobId).toString('base64url') },
      { origin: 'https://evil.example' },
      { verified: false },
      { counter: 1 },
    ];
    for (const tamper of tampers) {
      const ceremony = await passkeyChallenge(base);
      const credential = assertPasskey(passkey, ceremony.challenge, PASSKEY_ORIGIN, tamper);
      const res = await postPasskeySignIn(base, ceremony, credential, { tenant_id: 'globex' });
      expect(res.status, JSON.stringify(tamper)).toBe(401);
      expect(await res.text()).toContain('The passkey was not accepted.');
    }
  });

  it('needs the login-CSRF rule for the options: the pre-session cookie, its token, the same origin', async () => {
    const page = await openSignIn(base);
    const options = '/1/sign-in/passkey/options';
    const noCookie = await postForm(base, options, { csrf_token: page.token });
    expect(noCookie.status).toBe(403);
    expect(await errorOf(noCookie)).toBe('csrf_refused');
    const otherSite = await postForm(
      base,
      options,
      { csrf_token: page.token },
      {
        cookie: page.preSession,
        headers: { 'sec-fetch-site': 'cross-site', accept: 'application/json' },
      },
    );
    expect(otherSite.status).toBe(403);
    const wrongToken = await postForm(
      base,
      options,
      { csrf_token: 'x'.repeat(43) },
      {
        cookie: page.preSession,
        headers: { accept: 'application/json' },
      },
    );
    expect(wrongToken.status).toBe(403);
  });

  it('refuses a passkey removed, and one of a user disabled or removed', async () => {
    const { passkey: gone, res } = await registerSoftPasskey(base, bob);
    const { passkey_id: id } = await json(res);
    expect((await passkeyRequest(base, 'DELETE', `/${id as string}`, bob)).status).toBe(204);
    expect((await signInWithSoftPasskey(base, gone, { tenant_id: 'globex' })).status).toBe(401);

    const carol = { email: 'carol@example.com', password: 'carol-password-1' };
    const signup = await fetch(`${base}/1/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(carol),
    });
    const { user_id: carolId, tenant_id: personal } = await json(signup);
    const carolSession = await sessionOf(base, carol, personal as string);
    const { passkey: carols } = await registerSoftPasskey(base, carolSession);
    const ok = await signInWithSoftPasskey(base, carols);
    expect(ok.status).toBe(303);
    const store = fx.gw.gateway.store;
    const user = await store.users.getUser(carolId as string);
    await store.users.setPasswordHash(carolId as string, disabledHash(user?.passwordHash ?? ''));
    expect((await signInWithSoftPasskey(base, carols)).status).toBe(401);
    await fx.gw.gateway.store.users.removeUser(carolId as string);
    expect(
      await fx.gw.gateway.store.passkeys.getPasskey(carols.credentialId.toString('base64url')),
    ).toBeNull();
    expect((await signInWithSoftPasskey(base, carols)).status).toBe(401);
  });
});

describe("a refused passkey spends its address's login budget, never an e-mail's", () => {
  /** `perIp: 3`, and `perEmail` lower still: a passkey failure counted per e-mail would show. */
  let limited: IdentityFixture;
  let url: string;
  let passkey: SoftPasskey;
  /** Another client address, through the trusted proxy (the test's own address is the attacker's). */
  const ELSEWHERE = { headers: { 'x-forwarded-for': '198.51.100.7' } };
  beforeAll(async () => {
    limited = await startMemoryIdentityFixture({
      ...PASSKEY_CONFIG,
      trustedProxies: ['127.0.0.1/32'],
      limits: { login: { perEmail: 2, perIp: 3, windowSeconds: 600 } },
    });
    url = limited.gw.url;
    passkey = (await registerSoftPasskey(url, await sessionOf(url, ALICE, 'acme'))).passkey;
  }, 30_000);
  afterAll(async () => {
    await limited?.close();
  });

  it('counts only failures, refuses the address with 429 past perIp, its passwords too, not the user elsewhere', async () => {
    // Successes take no point: more of them than perIp, and the failures still count from zero.
    for (let i = 0; i < 4; i++)
      expect((await signInWithSoftPasskey(url, passkey, { tenant_id: 'acme' })).status).toBe(303);
    const stranger: SoftPasskey = { ...passkey, credentialId: randomBytes(32), counter: 0 };
    const failures = [
      () => signInWithSoftPasskey(url, stranger, { tenant_id: 'acme' }),
      async () => {
        const ceremony = await passkeyChallenge(url);
        const forged = assertPasskey(passkey, ceremony.challenge, 'https://evil.example');
        return postPasskeySignIn(url, ceremony, forged, { tenant_id: 'acme' });
      },
      async () => {
        const ceremony = await passkeyChallenge(url);
        const other = Buffer.from('another challenge').toString('base64url');
        const forged = assertPasskey(passkey, ceremony.challenge, PASSKEY_ORIGIN, {
          challenge: other,
        });
        return postPasskeySignIn(url, ceremony, forged, { tenant_id: 'acme' });
      },
    ];
    for (const fail of failures) expect((await fail()).status).toBe(401);

    // perIp spent: even a valid assertion is refused, as the page refuses a password.
    const valid = await signInWithSoftPasskey(url, passkey, { tenant_id: 'acme' });
    expect(valid.status).toBe(429);
    expect(Number(valid.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await valid.text()).toMatch(/Too many attempts\. Please try again in \d+ seconds\./);
    expect(setCookie(valid, 'tg_session')).toBeUndefined();
    const audit = limited.gw.gateway.store.auditLog({ maxEventsPerStream: 1000 });
    const events = (await audit.read('users', 0)).map(
      (entry) => JSON.parse(entry.event) as Record<string, unknown>,
    );
    expect(events.find((e) => e['request_id'] === valid.headers.get('x-request-id'))).toMatchObject(
      { event: 'login_locked_out', method: 'passkey' },
    );
    const ceremony = await passkeyChallenge(url);
    const asJson = await postForm(
      url,
      '/1/sign-in',
      {
        csrf_token: ceremony.token,
        step: 'passkey',
        credential: JSON.stringify(assertPasskey(passkey, ceremony.challenge, PASSKEY_ORIGIN)),
      },
      { cookie: ceremony.preSession, headers: { accept: 'application/json' } },
    );
    expect(asJson.status).toBe(429);
    expect(await errorOf(asJson)).toBe('too_many_requests');

    // One budget per address, whatever the method: the right password from here is refused too.
    const here = await signIn(url, { ...ALICE, tenant_id: 'acme' });
    expect(here.res.status).toBe(429);
    expect(Number(here.res.headers.get('retry-after'))).toBeGreaterThan(0);
    // No e-mail's budget was taken (perEmail 2 < 3 failures): Alice from elsewhere signs in.
    const elsewhere = await signIn(url, { ...ALICE, tenant_id: 'acme' }, ELSEWHERE);
    expect(elsewhere.res.status).toBe(303);
  });
});

describe('with passkeys off', () => {
  it('routes neither the registration nor the options, and the page has no script', async () => {
    const off = await startMemoryIdentityFixture({ sessions: SESSIONS });
    try {
      const session = await sessionOf(off.gw.url, ALICE, 'acme');
      expect((await passkeyRequest(off.gw.url, 'POST', '/options', session)).status).toBe(404);
      const page = await openSignIn(off.gw.url);
      expect(page.html).not.toContain('<script');
      expect(page.res.headers.get('content-security-policy')).not.toContain('script-src');
    } finally {
      await off.close();
    }
  });

  it("with them on, the page loads the gateway's one script, allowed by its CSP alone", async () => {
    const page = await openSignIn(base);
    const src = /<script src="([^"]+)" defer><\/script>/.exec(page.html)?.[1] as string;
    expect(src).toMatch(/^\/1\/sign-in\/passkey\.[A-Za-z0-9_-]{16}\.js$/);
    expect(page.html.match(/<script/g)).toHaveLength(1);
    const csp = page.res.headers.get('content-security-policy') as string;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    const script = await fetch(`${base}${src}`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toContain('text/javascript');
    expect(await script.text()).toContain('navigator.credentials.get');
  });
});

describe('one challenge, many answers at once', () => {
  const N = 10;

  it('a registration challenge answered by many credentials at once registers one passkey', async () => {
    const before = await json(await passkeyRequest(base, 'GET', '', bob));
    const options = await json(await passkeyRequest(base, 'POST', '/options', bob));
    const answers = await Promise.all(
      Array.from({ length: N }, () => {
        const { response } = createPasskey(options as never, PASSKEY_ORIGIN);
        return passkeyRequest(base, 'POST', '', bob, { response });
      }),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
    for (const res of answers.filter((r) => r.status !== 201)) {
      expect(res.status).toBe(400);
      expect(await errorOf(res)).toBe('invalid_request');
    }
    const after = await json(await passkeyRequest(base, 'GET', '', bob));
    expect((after.passkeys as unknown[]).length).toBe((before.passkeys as unknown[]).length + 1);
  });

  it('one assertion posted many times at once begins one session', async () => {
    const passkey = (await registerSoftPasskey(base, bob)).passkey;
    const bobId = (await fx.gw.gateway.store.users.findUserByEmail(BOB.email))?.id as string;
    const sessions = () => fx.gw.gateway.store.browserSessions.listBrowserSessions(bobId);
    const before = (await sessions()).length;
    const ceremony = await passkeyChallenge(base);
    const credential = assertPasskey(passkey, ceremony.challenge, PASSKEY_ORIGIN);
    const answers = await Promise.all(
      Array.from({ length: N }, () =>
        postPasskeySignIn(base, ceremony, credential, { tenant_id: 'globex' }),
      ),
    );
    expect(answers.filter((r) => r.status === 303)).toHaveLength(1);
    for (const res of answers.filter((r) => r.status !== 303)) {
      expect([401, 429]).toContain(res.status);
      expect(res.headers.get('set-cookie') ?? '').not.toContain('tg_session=');
    }
    expect((await sessions()).length).toBe(before + 1);
  });
});
