/**
 * Issue 21: `user disable` ends every session of the user on every running
 * instance before the command returns, and refuses their logins with the
 * answer a wrong password gets (no way to tell a disabled account from a
 * bad guess); `user enable` lets them log in again, their old tokens still
 * refused; neither a password change nor a restart's seed re-enables them.
 * The CLI's functions run in-process against two gateways on one Redis.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { seedCommand, userPassword, userSetDisabled } from '../../src/cli/admin.js';
import { validateConfig, type LoadedConfig } from '../../src/config/index.js';
import { basic, bearer, type TestGateway } from '../support/gateway.js';
import { printedJson } from '../support/captured-stdout.js';
import { expectError } from '../support/expect-error.js';
import {
  ALICE,
  BOB,
  startIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../support/identity-fixture.js';
import { startEchoUpstream, type Upstream } from '../support/upstream.js';

let fx: IdentityFixture;
let a: TestGateway;
let b: TestGateway;
let upstream: Upstream;
let loaded: LoadedConfig;
/** Alice's tokens from before the disable. */
let before: string[] = [];

beforeAll(async () => {
  upstream = await startEchoUpstream();
  fx = await startIdentityFixture({ routes: [{ prefix: '/api', upstream: upstream.url }] });
  a = fx.gw;
  b = await fx.startAnother();
  loaded = {
    config: validateConfig({ ...fx.config, seed: undefined }, process.cwd(), 'cli'),
    files: [],
  };
});
afterAll(async () => {
  await fx.close();
  await upstream.close();
});

const proxied = (gw: TestGateway, token: string) =>
  fetch(`${gw.url}/api/x`, { headers: { authorization: bearer(token) } });
const login = (gw: TestGateway, who: { email: string; password: string }) =>
  fetch(`${gw.url}/1/token?tenant_id=acme`, {
    headers: { authorization: basic(who.email, who.password) },
  });

it('disable: every token refused on every instance when the command returns; logins refused like a wrong password', async () => {
  const tokens = [await tokenFor(a.url, ALICE, 'acme'), await tokenFor(b.url, ALICE, 'acme')];
  before = tokens.map((t) => t.access_token);
  for (const gw of [a, b])
    for (const t of tokens) expect((await proxied(gw, t.access_token)).status).toBe(200);

  expect(await printedJson(() => userSetDisabled(loaded, ALICE.email, true))).toMatchObject({
    user_email: ALICE.email,
    disabled: true,
    sessions: 'ended',
  });

  for (const gw of [a, b]) {
    for (const t of tokens)
      await expectError(await proxied(gw, t.access_token), 401, 'invalid_token');
    const right = await expectError(await login(gw, ALICE), 401, 'invalid_credentials');
    const wrong = await expectError(
      await login(gw, { email: ALICE.email, password: 'not-her-password' }),
      401,
      'invalid_credentials',
    );
    expect(right).toEqual(wrong);
  }
  // Bob is untouched.
  expect((await login(a, BOB)).status).toBe(200);
  // Disabling again changes nothing.
  expect(await printedJson(() => userSetDisabled(loaded, ALICE.email, true))).toMatchObject({
    unchanged: true,
  });
});

it('neither a new password nor the seed applied again at a restart enables the user', async () => {
  const input = process.env.TG_TEST_PASSWORD;
  process.env.TG_TEST_PASSWORD = 'a-new-password-1';
  try {
    await printedJson(() => userPassword(loaded, ALICE.email, { passwordEnv: 'TG_TEST_PASSWORD' }));
  } finally {
    if (input === undefined) delete process.env.TG_TEST_PASSWORD;
    else process.env.TG_TEST_PASSWORD = input;
  }
  await expectError(
    await login(a, { email: ALICE.email, password: 'a-new-password-1' }),
    401,
    'invalid_credentials',
  );
  // The fixture's seed names Alice's original password: applying it sets that one, still disabled.
  await printedJson(() => seedCommand(loaded, fx.config.seed as string));
  await expectError(await login(b, ALICE), 401, 'invalid_credentials');
});

it('enable: the user logs in again; tokens from before the disable stay refused', async () => {
  expect(await printedJson(() => userSetDisabled(loaded, ALICE.email, false))).toMatchObject({
    disabled: false,
    sessions: 'ended',
  });
  const fresh = await tokenFor(b.url, ALICE, 'acme');
  for (const gw of [a, b]) {
    expect((await proxied(gw, fresh.access_token)).status).toBe(200);
    for (const old of before) await expectError(await proxied(gw, old), 401, 'invalid_token');
  }
  expect(before).toHaveLength(2);
});
