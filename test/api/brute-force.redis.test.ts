/**
 * Brute-force protection end to end, counted on the shared Redis: failed
 * logins per e-mail and per IP, signups per IP; 429 `too_many_requests` with
 * `Retry-After`; a correct password does not help once locked out; counting
 * is shared by instances.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic } from '../support/gateway.js';
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
