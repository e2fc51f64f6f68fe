/**
 * Brute-force protection end to end, counted on the shared Redis: failed
 * logins per e-mail and per IP, signups per IP; 429 `too_many_requests` with
 * `Retry-After`; a correct password does not help once locked out; counting
 * is shared by instances. A machine client's wrong secrets are counted per
 * client IP and per client id and IP, never per id alone (issue 42): they lock
 * out the address they come from, never the right secret from another.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic } from '../support/gateway.js';
import { makeClient, type MachineClient } from '../support/machine-client.js';
import { expectError } from '../support/expect-error.js';
import {
  ALICE,
  BOB,
  startIdentityFixture,
  type IdentityFixture,
} from '../support/identity-fixture.js';

let fx: IdentityFixture;
beforeAll(async () => {
  fx = await startIdentityFixture({
    // Client addresses from X-Forwarded-For (the tests of machine clients' secrets).
    trustedProxies: ['127.0.0.1/32'],
    limits: {
      login: { perEmail: 3, perIp: 5, windowSeconds: 60 },
      signup: { perIp: 2, windowSeconds: 60 },
    },
  });
});
afterAll(() => fx.close());

const login = (url: string, email: string, password: string) =>
  fetch(`${url}/1/token?tenant_id=acme`, { headers: { authorization: basic(email, password) } });

describe('failed logins per e-mail', () => {
  it('locks the e-mail after perEmail failures, on every instance, even for the right password', async () => {
    const other = await fx.startAnother();
    for (let i = 0; i < 3; i++)
      await expectError(
        await login(fx.gw.url, ALICE.email, 'wrong-password'),
        401,
        'invalid_credentials',
      );
    const locked = await login(other.url, ALICE.email, ALICE.password);
    await expectError(locked, 429, 'too_many_requests');
    const retryAfter = Number(locked.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // Other users are not affected by Alice's lock.
    expect((await login(fx.gw.url, BOB.email, BOB.password)).status).toBe(200);
  });
});

describe('failed logins per IP and signups per IP', () => {
  it('locks the client address after perIp failures across e-mails', async () => {
    // Bob's success above reset nothing for the IP; two more failures on unknown e-mails reach 5.
    await expectError(
      await login(fx.gw.url, 'nobody-1@example.com', 'x-password-1'),
      401,
      'invalid_credentials',
    );
    await expectError(
      await login(fx.gw.url, 'nobody-2@example.com', 'x-password-1'),
      401,
      'invalid_credentials',
    );
    const res = await login(fx.gw.url, BOB.email, BOB.password);
    await expectError(res, 429, 'too_many_requests');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('allows perIp signups and refuses the next with 429', async () => {
    const signup = (n: number) =>
      fetch(`${fx.gw.url}/1/users`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: `new-${n}@example.com`, password: 'long-enough-1' }),
      });
    expect((await signup(1)).status).toBe(201);
    expect((await signup(2)).status).toBe(201);
    const third = await signup(3);
    await expectError(third, 429, 'too_many_requests');
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe("a machine client's wrong secrets (its id is public)", () => {
  /** `POST /1/oauth/token` for `client` with `secret`, from `ip` (through the trusted proxy). */
  const grant = (
    ip: string,
    client: MachineClient,
    secret = client.clientSecret,
    url = fx.gw.url,
  ) =>
    fetch(`${url}/1/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-forwarded-for': ip,
      },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: client.clientId,
        client_secret: secret,
      }).toString(),
    });
  const WRONG = `tgs_${'A'.repeat(43)}`;

  it('lock out only the address they come from: the right secret works from any other', async () => {
    const client = await makeClient(fx.gw.gateway.store, 'acme', []);
    const attacker = '203.0.113.66';
    // perEmail (3) wrong secrets for the id from the attacker's address, and more from others:
    // more than perEmail in all, as one who knows the id would send them.
    for (let i = 0; i < 3; i++)
      await expectError(await grant(attacker, client, WRONG), 401, 'invalid_client');
    for (const ip of ['203.0.113.1', '203.0.113.2', '203.0.113.3'])
      await expectError(await grant(ip, client, WRONG), 401, 'invalid_client');
    // The client, from its own address and on every instance: let in.
    const other = await fx.startAnother();
    expect((await grant('198.51.100.7', client)).status).toBe(200);
    expect((await grant('198.51.100.8', client, client.clientSecret, other.url)).status).toBe(200);
    // The attacker's address, past its budget for the id: 429, even with the right secret.
    const locked = await grant(attacker, client);
    await expectError(locked, 429, 'too_many_requests');
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it("spend the address's own budget across client ids (perIp), and no one else's", async () => {
    const attacker = '203.0.113.99';
    const clients = await Promise.all(
      [1, 2, 3].map(() => makeClient(fx.gw.gateway.store, 'acme', [])),
    );
    // perIp (5) wrong secrets spread over three ids: no id reaches its per-address budget (3).
    for (const client of [...clients, clients[0], clients[1]] as MachineClient[])
      await expectError(await grant(attacker, client, WRONG), 401, 'invalid_client');
    await expectError(await grant(attacker, clients[2] as MachineClient), 429, 'too_many_requests');
    for (const client of clients) expect((await grant('198.51.100.9', client)).status).toBe(200);
  });
});
