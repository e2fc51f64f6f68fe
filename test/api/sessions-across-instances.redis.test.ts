/**
 * Sessions across instances: two gateways on one store, what one of them (or
 * the CLI, or the store) ends or changes, the other honours at once — a
 * logout, a password change, a disabled user, a role changed, a membership
 * removed — while a steady stream of proxied requests makes no Redis call.
 * One redis-server for the file; each block starts its two gateways on it
 * under a key prefix of its own and closes them when it ends.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionPrincipal } from '../../src/auth/sessions/browser-sessions.js';
import { memberChange, seedCommand, userPassword, userSetDisabled } from '../../src/cli/admin.js';
import { memberRole } from '../../src/cli/members.js';
import { createCore, type Core } from '../../src/core/create-core.js';
import { printedJson } from '../support/captured-stdout.js';
import { expectBearerChallenge, expectError } from '../support/expect-error.js';
import { basic, bearer, type TestGateway } from '../support/gateway.js';
import { ALICE, BOB, tokenFor } from '../support/identity-fixture.js';
import { commandsDuring, leaseRenewals } from '../support/redis-commands.js';
import { startRedisServer, type TestRedisServer } from '../support/redis-server.js';
import { useTwoInstances } from '../support/two-instances.js';
import { changePassword } from '../support/account-requests.js';

let server: TestRedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(() => server?.stop());

/** The default lease (`revocation.leaseMs`). */
const LEASE_MS = 2000;
/** A route to the echo upstream. */
const echoApi = (echo: string) => ({ routes: [{ prefix: '/api', upstream: echo }] });
const proxied = (gw: TestGateway, token: string) =>
  fetch(`${gw.url}/api/x`, { headers: { authorization: bearer(token) } });
const tenantOn = (gw: TestGateway, token: string) =>
  fetch(`${gw.url}/1/tenants/current`, { headers: { authorization: bearer(token) } });

/**
 * Two gateway instances on one Redis and one key directory: a token from one
 * is good on the other, and a password change or logout on one refuses the
 * old token on the other at once.
 */
describe('a token of one instance on the other', () => {
  const t = useTwoInstances(() => server);

  it('a token issued by one instance is accepted by the other', async () => {
    const { access_token } = await tokenFor(t.a.url, BOB, 'globex');
    const res = await tenantOn(t.b, access_token);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { tenant_id: string }).tenant_id).toBe('globex');
  });

  it('a password change on one instance refuses the old token on the other at once', async () => {
    const { access_token } = await tokenFor(t.a.url, BOB, 'acme');
    expect((await tenantOn(t.b, access_token)).status).toBe(200);
    const change = await changePassword(t.a.url, BOB, 'bob-password-2');
    expect(change.status).toBe(204);
    await expectError(await tenantOn(t.b, access_token), 401, 'invalid_token');
    await expectError(await tenantOn(t.a, access_token), 401, 'invalid_token');
    const fresh = await tokenFor(t.b.url, { ...BOB, password: 'bob-password-2' }, 'acme');
    expect((await tenantOn(t.a, fresh.access_token)).status).toBe(200);
  });

  it('a logout on one instance refuses the token on the other at once', async () => {
    const { access_token } = await tokenFor(
      t.b.url,
      { ...BOB, password: 'bob-password-2' },
      'globex',
    );
    const del = await fetch(`${t.b.url}/1/token`, {
      method: 'DELETE',
      headers: { authorization: bearer(access_token) },
    });
    expect(del.status).toBe(204);
    await expectError(await tenantOn(t.a, access_token), 401, 'invalid_token');
  });
});

/**
 * The hot path's promise, on a real redis-server: a steady stream of proxied
 * requests makes no Redis call, revocation still takes effect on every
 * instance, and when the invalidation channel drops the cache is not trusted.
 */
describe('the session cache on a real redis-server', () => {
  const t = useTwoInstances(() => server, echoApi);

  it('a steady stream of proxied requests makes no Redis call', async () => {
    const { access_token } = await tokenFor(t.a.url, ALICE, 'acme');
    expect((await proxied(t.b, access_token)).status).toBe(200); // warms b's caches
    const calls = await commandsDuring(t.redis, async () => {
      for (let i = 0; i < 200; i++) expect((await proxied(t.b, access_token)).status).toBe(200);
    });
    expect(calls.data).toBe(0);
    // Only the two instances' lease renewals, which run whatever the traffic.
    expect(calls.scripts).toBeLessThanOrEqual(leaseRenewals(2, LEASE_MS, calls.elapsedMs));
  });

  it('a logout on one instance refuses the token on the other with warm caches', async () => {
    const { access_token } = await tokenFor(t.a.url, ALICE, 'acme');
    expect((await proxied(t.b, access_token)).status).toBe(200);
    const del = await fetch(`${t.a.url}/1/token`, {
      method: 'DELETE',
      headers: { authorization: bearer(access_token) },
    });
    expect(del.status).toBe(204);
    await expectError(await proxied(t.b, access_token), 401, 'invalid_token');
  });

  it('with the invalidation channel cut, a revocation it never carried is still honoured', async () => {
    const { access_token } = await tokenFor(t.a.url, ALICE, 'acme');
    expect((await proxied(t.b, access_token)).status).toBe(200);
    const claims = JSON.parse(
      Buffer.from(access_token.split('.')[1] as string, 'base64url').toString(),
    ) as { jti: string };
    await t.redis.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    await new Promise((r) => setTimeout(r, 100));
    // Deny-list the token behind the gateways' backs: no event is published.
    const prefix = (t.fx.config.store as { redis: { keyPrefix: string } }).redis.keyPrefix;
    await t.redis.set(`${prefix}revoked:{${claims.jti}}`, '1', 'EX', 600);
    await expectError(await proxied(t.b, access_token), 401, 'invalid_token');
    // And once the channel is back, the cache built before the gap is gone too.
    for (
      let i = 0;
      i < 50 && Number((await t.redis.pubsub('NUMSUB', `${prefix}sessions`))[1]) < 2;
      i++
    ) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(Number((await t.redis.pubsub('NUMSUB', `${prefix}sessions`))[1])).toBe(2);
    await expectError(await proxied(t.b, access_token), 401, 'invalid_token');
    await expectError(await proxied(t.a, access_token), 401, 'invalid_token');
  });
});

/**
 * Issue 21: `user disable` ends every session of the user on every running
 * instance before the command returns, and refuses their logins with the
 * answer a wrong password gets (no way to tell a disabled account from a
 * bad guess); `user enable` lets them log in again, their old tokens still
 * refused; neither a password change nor a restart's seed re-enables them.
 * The CLI's functions run in-process against two gateways on one Redis.
 */
describe('user disable and enable', () => {
  const t = useTwoInstances(() => server, echoApi);
  /** Alice's tokens from before the disable. */
  let before: string[] = [];

  const login = (gw: TestGateway, who: { email: string; password: string }) =>
    fetch(`${gw.url}/1/token?tenant_id=acme`, {
      headers: { authorization: basic(who.email, who.password) },
    });

  it('disable: every token refused on every instance when the command returns; logins refused like a wrong password', async () => {
    const tokens = [await tokenFor(t.a.url, ALICE, 'acme'), await tokenFor(t.b.url, ALICE, 'acme')];
    before = tokens.map((t) => t.access_token);
    for (const gw of [t.a, t.b])
      for (const issued of tokens)
        expect((await proxied(gw, issued.access_token)).status).toBe(200);

    expect(await printedJson(() => userSetDisabled(t.cli, ALICE.email, true))).toMatchObject({
      user_email: ALICE.email,
      disabled: true,
      sessions: 'ended',
    });

    for (const gw of [t.a, t.b]) {
      for (const issued of tokens)
        await expectError(await proxied(gw, issued.access_token), 401, 'invalid_token');
      const right = await expectError(await login(gw, ALICE), 401, 'invalid_credentials');
      const wrong = await expectError(
        await login(gw, { email: ALICE.email, password: 'not-her-password' }),
        401,
        'invalid_credentials',
      );
      expect(right).toEqual(wrong);
    }
    // Bob is untouched.
    expect((await login(t.a, BOB)).status).toBe(200);
    // Disabling again changes nothing.
    expect(await printedJson(() => userSetDisabled(t.cli, ALICE.email, true))).toMatchObject({
      unchanged: true,
    });
  });

  it('neither a new password nor the seed applied again at a restart enables the user', async () => {
    const input = process.env.TG_TEST_PASSWORD;
    process.env.TG_TEST_PASSWORD = 'a-new-password-1';
    try {
      await printedJson(() =>
        userPassword(t.cli, ALICE.email, { passwordEnv: 'TG_TEST_PASSWORD' }),
      );
    } finally {
      if (input === undefined) delete process.env.TG_TEST_PASSWORD;
      else process.env.TG_TEST_PASSWORD = input;
    }
    await expectError(
      await login(t.a, { email: ALICE.email, password: 'a-new-password-1' }),
      401,
      'invalid_credentials',
    );
    // The fixture's seed names Alice's original password: applying it sets that one, still disabled.
    await printedJson(() => seedCommand(t.cli, t.fx.config.seed as string));
    await expectError(await login(t.b, ALICE), 401, 'invalid_credentials');
  });

  it('enable: the user logs in again; tokens from before the disable stay refused', async () => {
    expect(await printedJson(() => userSetDisabled(t.cli, ALICE.email, false))).toMatchObject({
      disabled: false,
      sessions: 'ended',
    });
    const fresh = await tokenFor(t.b.url, ALICE, 'acme');
    for (const gw of [t.a, t.b]) {
      expect((await proxied(gw, fresh.access_token)).status).toBe(200);
      for (const old of before) await expectError(await proxied(gw, old), 401, 'invalid_token');
    }
    expect(before).toHaveLength(2);
  });
});

/**
 * Issue 32, item 4: a role change ends the tokens issued under the old role,
 * on every instance, before `member role` returns — as a membership removal
 * does (the store moves the membership to a new generation). A demoted
 * admin's token, with the admin's scopes, is refused on the other instance
 * at once; the new token carries the member's scopes, and is refused where
 * only an admin's scope passes (`insufficient_scope`). Two instances on one
 * redis-server.
 */
describe('a role change', () => {
  const t = useTwoInstances(
    () => server,
    (echo) => ({
      authorization: {
        roles: { admin: ['catalog:read', 'catalog:write'], member: ['catalog:read'] },
      },
      routes: [
        {
          prefix: '/catalog',
          upstream: echo,
          scopes: { GET: ['catalog:read'], '*': ['catalog:write'] },
        },
      ],
    }),
  );

  const write = (gw: TestGateway, token: string) =>
    fetch(`${gw.url}/catalog/items`, {
      method: 'POST',
      body: '{}',
      headers: { authorization: bearer(token) },
    });

  it('a demoted admin’s token is refused on the other instance as soon as `member role` returns', async () => {
    const before = await tokenFor(t.a.url, ALICE, 'acme');
    expect(before['scope']).toBe('catalog:read catalog:write');
    // Both instances have verified and cached the admin's token.
    for (const gw of [t.a, t.b]) expect((await write(gw, before.access_token)).status).toBe(200);

    expect(await printedJson(() => memberRole(t.cli, 'acme', ALICE.email, 'member'))).toMatchObject(
      {
        tenant_id: 'acme',
        members: expect.arrayContaining([
          expect.objectContaining({ user_email: ALICE.email, role: 'member' }),
        ]) as unknown,
      },
    );

    for (const gw of [t.b, t.a]) {
      const res = await write(gw, before.access_token);
      await expectError(res, 401, 'invalid_token');
      expectBearerChallenge(res);
    }

    // Her new token carries the member's scopes: reading passes, writing does not.
    const after = await tokenFor(t.b.url, ALICE, 'acme');
    expect(after['scope']).toBe('catalog:read');
    for (const gw of [t.a, t.b]) {
      const read = await fetch(`${gw.url}/catalog/items`, {
        headers: { authorization: bearer(after.access_token) },
      });
      expect(read.status).toBe(200);
      await expectError(await write(gw, after.access_token), 403, 'insufficient_scope');
    }

    // Promoted back: the member's token ends too, and an admin's token writes again.
    await printedJson(() => memberRole(t.cli, 'acme', ALICE.email, 'admin'));
    for (const gw of [t.a, t.b]) {
      const res = await write(gw, after.access_token);
      await expectError(res, 401, 'invalid_token');
    }
    const again = await tokenFor(t.a.url, ALICE, 'acme');
    for (const gw of [t.a, t.b]) expect((await write(gw, again.access_token)).status).toBe(200);
  });
});

/**
 * Issue 12, class 5: removing a member ends that user's access to that tenant
 * at once, on every instance — their unexpired tokens for it included, for
 * good: adding them back (issue 30) lets in only tokens issued since — while
 * a steady stream of proxied requests still makes no Redis call. A token
 * whose membership is gone is an invalid token: 401 `invalid_token`, as for a
 * revoked one (`tenant_access_denied` stays the answer to a token request).
 */
describe('a membership removed', () => {
  const t = useTwoInstances(() => server, echoApi);
  const tenant = (gw: TestGateway, token: string, tenantId: string) =>
    fetch(`${gw.url}/1/tenants/${tenantId}`, { headers: { authorization: bearer(token) } });

  async function expectRefused(res: Response): Promise<void> {
    await expectError(res, 401, 'invalid_token');
    expectBearerChallenge(res);
  }

  /** Bob's acme token from before his removal (the first test). */
  let removedToken: string;

  it('a member removed on one instance loses the tenant on every instance at once', async () => {
    const acme = await tokenFor(t.a.url, BOB, 'acme');
    removedToken = acme.access_token;
    const globex = await tokenFor(t.b.url, BOB, 'globex');
    const bobId = acme['user_id'] as string;
    for (const gw of [t.a, t.b]) {
      expect((await proxied(gw, acme.access_token)).status).toBe(200);
      expect((await tenant(gw, acme.access_token, 'acme')).status).toBe(200);
      expect((await proxied(gw, globex.access_token)).status).toBe(200);
    }
    // Warm caches: the steady state makes no store call, membership included.
    const warm = await commandsDuring(t.redis, async () => {
      for (let i = 0; i < 100; i++) {
        expect((await proxied(t.a, acme.access_token)).status).toBe(200);
        expect((await proxied(t.b, acme.access_token)).status).toBe(200);
      }
    });
    expect(warm.data).toBe(0);
    // Only the two instances' lease renewals, which run whatever the traffic.
    expect(warm.scripts).toBeLessThanOrEqual(leaseRenewals(2, LEASE_MS, warm.elapsedMs));

    expect(await t.b.gateway.store.memberships.removeMember('acme', bobId)).toBe(true);

    for (const gw of [t.a, t.b]) {
      await expectRefused(await proxied(gw, acme.access_token));
      await expectRefused(await tenant(gw, acme.access_token, 'acme'));
      await expectRefused(await tenant(gw, acme.access_token, 'current'));
      // Only that tenant: his other memberships are untouched.
      expect((await proxied(gw, globex.access_token)).status).toBe(200);
    }
    // And no new token for it either.
    const res = await fetch(`${t.a.url}/1/token?tenant_id=acme`, {
      headers: { authorization: basic(BOB.email, BOB.password) },
    });
    await expectError(res, 403, 'tenant_access_denied');

    // Refusals are cached too: hammering with the dead token costs Redis nothing.
    const refused = await commandsDuring(t.redis, async () => {
      for (let i = 0; i < 20; i++) expect((await proxied(t.a, acme.access_token)).status).toBe(401);
    });
    expect(refused.data).toBe(0);
    expect(refused.scripts).toBeLessThanOrEqual(leaseRenewals(2, LEASE_MS, refused.elapsedMs));
  });

  it('a member added back gets the tenant on every instance at once, under new tokens only', async () => {
    const bobId = (await tokenFor(t.a.url, BOB, 'globex'))['user_id'] as string;
    // Both instances hold bob's acme membership as gone (the test above): adding him back must reach them.
    expect(await t.a.gateway.store.memberships.addMember('acme', bobId)).toBe(true);
    const fresh = await tokenFor(t.b.url, BOB, 'acme');
    for (const gw of [t.a, t.b]) {
      expect((await proxied(gw, fresh.access_token)).status).toBe(200);
      expect((await tenant(gw, fresh.access_token, 'acme')).status).toBe(200);
      // Issue 30: the membership added back is another one; the token of the removed one stays dead.
      await expectRefused(await proxied(gw, removedToken));
      await expectRefused(await tenant(gw, removedToken, 'acme'));
    }
    // Both verdicts from the cache: the new token's and the old one's cost Redis nothing.
    const steady = await commandsDuring(t.redis, async () => {
      for (let i = 0; i < 20; i++) {
        for (const gw of [t.a, t.b]) {
          expect((await proxied(gw, fresh.access_token)).status).toBe(200);
          expect((await proxied(gw, removedToken)).status).toBe(401);
        }
      }
    });
    expect(steady.data).toBe(0);
    expect(steady.scripts).toBeLessThanOrEqual(leaseRenewals(2, LEASE_MS, steady.elapsedMs));
  });

  it('`member remove` from the command line ends the access on every running instance', async () => {
    const acme = await tokenFor(t.a.url, ALICE, 'acme');
    for (const gw of [t.a, t.b]) expect((await proxied(gw, acme.access_token)).status).toBe(200);

    expect(
      await printedJson(() => memberChange(t.cli, 'remove', 'acme', ALICE.email)),
    ).toMatchObject({
      tenant_id: 'acme',
    });

    for (const gw of [t.a, t.b]) {
      await expectRefused(await proxied(gw, acme.access_token));
      await expectRefused(await tenant(gw, acme.access_token, 'acme'));
    }
  });
});

/**
 * Browser sessions (issue 44) across instances: two serving cores on the
 * gateways' store (each an instance: its own session guard, lease and
 * caches), and the gateways' own API for a password change. What one
 * instance ends, the other refuses at once; a session one instance never
 * saw is read from the store; a steady stream of recognitions makes no
 * Redis call.
 */
describe('browser sessions across instances', () => {
  const t = useTwoInstances(() => server, echoApi);
  let a: Core;
  let b: Core;
  let alice: string;

  beforeAll(async () => {
    const silent = pino({ level: 'silent' });
    a = await createCore(t.cli.config, silent, undefined, { serving: true });
    b = await createCore(t.cli.config, silent, undefined, { serving: true });
    alice = (await a.store.users.findUserByEmail(ALICE.email))?.id ?? '';
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  const begin = () =>
    a.browserSessions.start({ userId: alice, tenantId: 'acme', userAgent: 'test', ip: '::1' });
  const on = (core: Core, cookie: string): Promise<SessionPrincipal> =>
    Promise.resolve().then(() => core.browserSessions.principal(cookie));
  const refusalOn = (core: Core, cookie: string) =>
    on(core, cookie).then(
      () => 'accepted',
      (err: { code: string; detail?: string }) => `${err.code}:${err.detail ?? ''}`,
    );

  it('a session begun on one instance is read from the store by another, whose steady state then makes no Redis call', async () => {
    const { cookieValue, session } = await begin();
    expect(await on(b, cookieValue)).toMatchObject({
      kind: 'session',
      sessionId: session.sessionId,
    });
    const calls = await commandsDuring(t.redis, async () => {
      for (let i = 0; i < 200; i++) await on(b, cookieValue);
    });
    expect(calls.data).toBe(0);
  });

  it('signed out on one instance, refused on the other at once', async () => {
    const { cookieValue, session } = await begin();
    expect(await refusalOn(b, cookieValue)).toBe('accepted');
    expect(await a.browserSessions.end(session.sessionId, 'sign_out', alice)).toBe(true);
    expect(await refusalOn(b, cookieValue)).toBe('invalid_token:revoked');
    expect(await refusalOn(a, cookieValue)).toBe('invalid_token:session_unknown');
    expect((await b.browserSessions.list(alice)).map((s) => s.sessionId)).not.toContain(
      session.sessionId,
    );
  });

  it('a password change on a gateway ends the session on every instance before its answer', async () => {
    const { cookieValue } = await begin();
    expect(await refusalOn(a, cookieValue)).toBe('accepted');
    expect(await refusalOn(b, cookieValue)).toBe('accepted');
    expect((await changePassword(t.a.url, ALICE, 'alice-password-2')).status).toBe(204);
    expect(await refusalOn(b, cookieValue)).toBe('invalid_token:session_ended');
    expect(await refusalOn(a, cookieValue)).toBe('invalid_token:session_ended');
  });
});
