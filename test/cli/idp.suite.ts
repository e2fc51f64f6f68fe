/**
 * Issue 34, the operator's side: `tenant idp set|show|remove` as an operator
 * runs them (the CLI as the harness runs it) against a real redis-server. The
 * client secret comes from stdin or GATEWAY_IDP_CLIENT_SECRET, never argv; it
 * is stored sealed (no Redis value holds it), never printed or audited; one
 * issuer and client id belong to one tenant; removing the tenant removes its IdP;
 * an issuer on a non-public address is refused unless `sso.allowPrivateIssuers`.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretSealer } from '../../src/auth/federation/sealed-secrets.js';
import { type Case, type CliHarness, releaseCliHarness, sharedCliHarness } from './harness.js';
import { ALICE_ACME_GLOBEX } from './seeds.js';

const TIMEOUT = 60_000;
const SECRET = `idp-secret-${randomBytes(12).toString('hex')}`;
const KEY = randomBytes(32);
const ACME_ISSUER = 'https://login.acme.example/realms/acme';

const SEED = ALICE_ACME_GLOBEX;

interface View {
  tenant_id: string;
  issuer: string;
  client_id: string;
  client_secret_set: boolean;
  domains: string[];
  role: string;
  link_existing: boolean;
  updated_at: number;
}

let h: CliHarness;
let kase: Case;
let prefix: string;
let personalTenant: string;

beforeAll(async () => {
  h = await sharedCliHarness();
  kase = h.newCase('sso: { secretsKeyFile: ./sso.key }');
  writeFileSync(join(kase.dir, 'sso.key'), `${KEY.toString('base64')}\n`, { mode: 0o600 });
  await h.ok(['keys', 'add', ...kase.c]);
  await h.ok(['seed', h.writeSeed(kase, SEED), ...kase.c]);
  prefix = /keyPrefix: "([^"]+)"/.exec(readFileSync(kase.config, 'utf8'))![1]!;
  const tenants = await h.ok<{ tenant_id: string; type: string }[]>(['tenant', 'list', ...kase.c]);
  personalTenant = tenants.find((t) => t.type === 'usertenant')!.tenant_id;
  // Issue 42: an IdP names only domains its tenant has verified (here on the operator's word).
  const verified: [string, string][] = [
    ['acme', 'acme.example'],
    ['acme', 'acme-corp.example'],
    ['globex', 'globex.example'],
    ['globex', 'g.example'],
  ];
  for (const [tenant, domain] of verified)
    await h.ok(['tenant', 'domain', 'add', tenant, domain, '--verified', ...kase.c]);
}, TIMEOUT);

afterAll(async () => {
  if (h !== undefined) await releaseCliHarness();
});

const set = (tenant: string, ...more: string[]) => [
  'tenant',
  'idp',
  'set',
  tenant,
  '--client-id',
  'tenant-gateway',
  ...more,
  ...kase.c,
];

/** Every key and value under the case's prefix, hash fields and stream entries included. */
async function stored(): Promise<{ keys: string[]; text: string }> {
  const redis = new Redis(h.env().TG_TEST_REDIS_URL as string);
  try {
    const keys = (await redis.keys(`${prefix}*`)).sort();
    const values: string[] = [];
    for (const key of keys) {
      const type = await redis.type(key);
      if (type === 'string') values.push((await redis.get(key)) ?? '');
      if (type === 'hash') values.push(JSON.stringify(await redis.hgetall(key)));
      if (type === 'set') values.push(...(await redis.smembers(key)));
      if (type === 'stream') values.push(JSON.stringify(await redis.xrange(key, '-', '+')));
    }
    return { keys, text: [...keys, ...values].join('\n') };
  } finally {
    redis.disconnect();
  }
}

const auditOf = (tenantId: string) => h.auditOf(kase, tenantId);

describe('tenant idp', () => {
  it(
    'set with the secret on stdin: printed without it, stored sealed, audited without it',
    async () => {
      const run = await h.cli(
        set(
          'acme',
          '--issuer',
          ACME_ISSUER,
          '--domains',
          'Acme.example, acme-corp.example',
          '--role',
          'admin',
          '--link-existing',
          '--client-secret-stdin',
        ),
        { input: `${SECRET}\n` },
      );
      expect([run.code, run.stderr]).toEqual([0, '']);
      expect(run.stdout).not.toContain(SECRET);
      const view = JSON.parse(run.stdout) as View;
      expect(view).toEqual({
        tenant_id: 'acme',
        issuer: ACME_ISSUER,
        client_id: 'tenant-gateway',
        client_secret_set: true,
        domains: ['acme-corp.example', 'acme.example'],
        role: 'admin',
        link_existing: true,
        updated_at: expect.any(Number),
      });
      expect(await h.ok(['tenant', 'idp', 'show', 'acme', ...kase.c])).toEqual(view);

      const { keys, text } = await stored();
      expect(text).not.toContain(SECRET);
      expect(keys).toContain(`${prefix}{dir}:idp:acme`);
      const redis = new Redis(h.env().TG_TEST_REDIS_URL as string);
      try {
        const sealed = await redis.hget(`${prefix}{dir}:idp:acme`, 'clientSecretSealed');
        expect(createSecretSealer(KEY).open(sealed!, 'acme')).toBe(SECRET);
        expect(
          await redis.hget(`${prefix}{dir}:idp-clients`, `${ACME_ISSUER} tenant-gateway`),
        ).toBe('acme');
      } finally {
        redis.disconnect();
      }

      const audit = await auditOf('acme');
      expect(audit).toContain('"event":"idp_set"');
      expect(audit).toContain(`"issuer":"${ACME_ISSUER}"`);
      expect(audit).toContain('"idp_client_id":"tenant-gateway"');
      expect(audit).not.toContain(SECRET);
    },
    TIMEOUT,
  );

  it(
    'set with the secret from GATEWAY_IDP_CLIENT_SECRET; without one, the stored one is kept',
    async () => {
      const other = `${SECRET}-env`;
      const args = set(
        'globex',
        '--issuer',
        'https://idp.globex.example',
        '--domains',
        'globex.example',
      );
      const first = await h.ok<View>(args, { env: { GATEWAY_IDP_CLIENT_SECRET: other } });
      expect([first.client_secret_set, first.role, first.link_existing]).toEqual([
        true,
        'member',
        false,
      ]);
      expect(JSON.stringify(first)).not.toContain(other);
      expect((await stored()).text).not.toContain(other);
      const again = await h.ok<View>(args);
      expect(again.client_secret_set).toBe(true);
      const removed = await h.ok<View>([...args, '--remove-client-secret']);
      expect(removed.client_secret_set).toBe(false);
    },
    TIMEOUT,
  );

  it('never takes the secret from argv', async () => {
    const stderr = await h.fails(
      set(
        'globex',
        '--issuer',
        'https://idp.globex.example',
        '--domains',
        'g.example',
        '--client-secret',
        SECRET,
      ),
    );
    expect(stderr).toMatch(/unknown option '--client-secret'/);
    expect(stderr).not.toContain(SECRET);
  });

  it(
    'refuses an issuer on a loopback or private address unless sso.allowPrivateIssuers (issue 42)',
    async () => {
      for (const issuer of [
        'https://127.0.0.1:8443/realms/x',
        'https://localhost/x',
        'https://10.1.2.3',
      ]) {
        const refused = await h.fails(set('acme', '--issuer', issuer, '--domains', 'acme.example'));
        expect(refused).toMatch(/^error: --issuer: it is not on a public address/);
        expect(refused).toMatch(/sso\.allowPrivateIssuers/);
      }
      const allowing = h.newCase('sso: { allowPrivateIssuers: true }');
      await h.ok(['seed', h.writeSeed(allowing, SEED), ...allowing.c]);
      await h.ok(['tenant', 'domain', 'add', 'acme', 'acme.example', '--verified', ...allowing.c]);
      const ok = ['--issuer', 'https://localhost/x', '--domains', 'acme.example'];
      const view = await h.ok<View>([
        ...set('acme', ...ok).slice(0, -kase.c.length),
        ...allowing.c,
      ]);
      expect(view.issuer).toBe('https://localhost/x');
    },
    TIMEOUT,
  );

  it(
    "refuses another tenant's issuer, bad options, and tenants that cannot have one",
    async () => {
      const taken = await h.fails(
        set('globex', '--issuer', ACME_ISSUER, '--domains', 'globex.example'),
      );
      expect(taken).toMatch(/^error: issuer_in_use: /);
      expect((await h.ok<View>(['tenant', 'idp', 'show', 'globex', ...kase.c])).issuer).toBe(
        'https://idp.globex.example',
      );
      const refusals: [string[], RegExp][] = [
        [
          ['--issuer', 'http://idp.globex.example', '--domains', 'g.example'],
          /^error: --issuer: must be an https:\/\/ URL/,
        ],
        [
          ['--issuer', 'https://idp.globex.example', '--domains', 'g.example,not a domain'],
          /^error: --domains: each must be a DNS name/,
        ],
        [
          ['--issuer', 'https://idp.globex.example', '--domains', 'g.example', '--role', 'owner'],
          /^error: --role: /,
        ],
      ];
      for (const [more, message] of refusals) {
        expect(await h.fails(set('globex', ...more))).toMatch(message);
      }
      const ok = ['--issuer', 'https://idp.example', '--domains', 'example.com'];
      expect(await h.fails(set('nowhere', ...ok))).toBe('error: no tenant nowhere\n');
      expect(await h.fails(set(personalTenant, ...ok))).toMatch(
        /personal tenant: only org tenants/,
      );
      expect(await h.fails(['tenant', 'idp', 'remove', 'nowhere', ...kase.c])).toBe(
        'error: no tenant nowhere\n',
      );
    },
    TIMEOUT,
  );

  it(
    'refuses a secret without sso.secretsKeyFile, saying so; sets one without a secret',
    async () => {
      const bare = h.newCase();
      await h.ok(['keys', 'add', ...bare.c]);
      await h.ok(['seed', h.writeSeed(bare, SEED), ...bare.c]);
      await h.ok(['tenant', 'domain', 'add', 'acme', 'acme.example', '--verified', ...bare.c]);
      const args = [
        'tenant',
        'idp',
        'set',
        'acme',
        '--issuer',
        ACME_ISSUER,
        '--client-id',
        'gw',
        '--domains',
        'acme.example',
        ...bare.c,
      ];
      const stderr = await h.fails([...args, '--client-secret-stdin'], { input: SECRET });
      expect(stderr).toMatch(/^error: the client secret: .*sso\.secretsKeyFile is not configured/);
      expect(stderr).not.toContain(SECRET);
      expect((await h.ok<View>(args)).client_secret_set).toBe(false);
    },
    TIMEOUT,
  );

  it(
    'refuses to run on a key file that holds no key, naming the setting',
    async () => {
      const broken = h.newCase('sso: { secretsKeyFile: ./sso.key }');
      await h.addKey(broken);
      writeFileSync(join(broken.dir, 'sso.key'), 'not a key\n');
      const stderr = await h.fails(['tenant', 'idp', 'show', 'acme', ...broken.c]);
      expect(stderr).toBe(
        `error: sso.secretsKeyFile: ${join(broken.dir, 'sso.key')} must hold 32 random bytes in base64 (openssl rand -base64 32 > ${join(broken.dir, 'sso.key')})\n`,
      );
    },
    TIMEOUT,
  );

  it(
    'remove, and tenant remove, take the record and its issuer along',
    async () => {
      expect(await h.ok(['tenant', 'idp', 'remove', 'globex', ...kase.c])).toEqual({
        tenant_id: 'globex',
        issuer: 'https://idp.globex.example',
        removed: true,
      });
      expect(await h.fails(['tenant', 'idp', 'show', 'globex', ...kase.c])).toBe(
        'error: globex has no identity provider\n',
      );
      expect(await auditOf('globex')).toContain('"event":"idp_removed"');

      expect((await h.ok<View>(['tenant', 'idp', 'show', 'acme', ...kase.c])).issuer).toBe(
        ACME_ISSUER,
      );
      await h.ok(['tenant', 'remove', 'acme', ...kase.c]);
      const { keys, text } = await stored();
      expect(keys).not.toContain(`${prefix}{dir}:idp:acme`);
      expect(text).not.toContain(`"${ACME_ISSUER}"`);
      // The issuer is free: another tenant may take it.
      const taken = await h.ok<View>(
        set('globex', '--issuer', ACME_ISSUER, '--domains', 'globex.example'),
      );
      expect(taken.issuer).toBe(ACME_ISSUER);
    },
    TIMEOUT,
  );
});
