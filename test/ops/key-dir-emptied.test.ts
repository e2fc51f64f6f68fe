/**
 * A shared key directory seen empty for a moment (a volume remounted, a
 * rotation script mid-way) must not make an instance generate a key of its
 * own: tokens it signed with it would fail on every other instance. A reload
 * (SIGHUP, or a token with an unknown kid) then keeps the keys it has.
 */
import { mkdtempSync, readdirSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/index.js';
import { fixtureSuite } from '../support/fixture-suite.js';
import { bearer } from '../support/gateway.js';
import { ALICE, tokenFor } from '../support/identity-fixture.js';
import { startEchoUpstream } from '../support/upstream.js';

const s = fixtureSuite({ upstream: startEchoUpstream }, ({ upstream }) => ({
  routes: [{ prefix: '/orders', upstream: upstream.url }],
}));

describe('the key directory emptied under a running gateway', () => {
  it('refuses the reload, generates nothing, and keeps signing and verifying with its keys', async () => {
    const before = (await tokenFor(s.fx.gw.url, ALICE, 'acme')).access_token;
    const aside = mkdtempSync(join(tmpdir(), 'tg-keys-aside-'));
    for (const name of readdirSync(s.fx.keys.dir)) {
      renameSync(join(s.fx.keys.dir, name), join(aside, name));
    }
    const config = validateConfig(
      { ...s.fx.config, listen: { host: '127.0.0.1', port: 0 }, log: { level: 'silent' } },
      process.cwd(),
      'test',
    );
    await expect(s.fx.gw.gateway.reload(config)).rejects.toThrow(/no key files/);
    expect(readdirSync(s.fx.keys.dir)).toEqual([]);

    const after = (await tokenFor(s.fx.gw.url, ALICE, 'acme')).access_token;
    const kid = (token: string) =>
      (
        JSON.parse(Buffer.from(token.split('.')[0] as string, 'base64url').toString()) as {
          kid: string;
        }
      ).kid;
    expect(kid(after)).toBe(s.fx.keys.kid);
    for (const token of [before, after]) {
      const res = await fetch(`${s.fx.gw.url}/orders/1`, {
        headers: { authorization: bearer(token) },
      });
      expect(res.status).toBe(200);
    }
    expect(readdirSync(s.fx.keys.dir)).toEqual([]);
  });
});
