/**
 * Issue 32, the operator's side: `client add|list|rotate|remove`, `client key
 * add|list|remove` and members' roles, as an operator runs them (the CLI
 * as the harness runs it) against a real redis-server. A secret or key is
 * printed once, stored only as its SHA-256 digest (no Redis value holds it),
 * and never listed or audited; a role change ends the member's tokens for the
 * tenant on a running gateway before the command returns.
 */
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyId } from '../../src/auth/clients/secrets.js';
import { basic, bearer } from '../support/gateway.js';
import { expectError } from '../support/expect-error.js';
import { type Case, type CliHarness, releaseCliHarness, sharedCliHarness } from './harness.js';

const TIMEOUT = 60_000;
const NOW = () => Math.floor(Date.now() / 1000);

const ALICE = { email: 'alice@example.com', password: 'alice-password-1' };
const BOB = { email: 'bob@example.com', password: 'bob-password-1' };
const SEED = [
  'users:',
  `  - { email: ${ALICE.email}, password: "${ALICE.password}" }`,
  `  - { email: ${BOB.email}, password: "${BOB.password}" }`,
  'tenants:',
  '  - { tenant_id: acme, name: Acme, cloud_region: eu-west-1, created_by: alice@example.com,',
  '      members: [alice@example.com, bob@example.com] }',
  '  - { tenant_id: globex, name: Globex, cloud_region: eu-west-1, created_by: bob@example.com,',
  '      members: [] }',
].join('\n');

interface Created {
  client_id: string;
  client_secret: string;
  tenant_id: string;
  name: string;
  scopes: string[];
  created_at: number;
  expires_at: number | null;
}

interface KeyCreated {
  key_id: string;
  api_key: string;
  client_id: string;
  tenant_id: string;
  created_at: number;
  expires_at: number | null;
}

let h: CliHarness;
let kase: Case;
let prefix: string;

beforeAll(async () => {
  h = await sharedCliHarness();
  kase = h.newCase();
  await h.ok(['keys', 'add', ...kase.c]);
  await h.ok(['seed', h.writeSeed(kase, SEED), ...kase.c]);
  const config = (await import('node:fs')).readFileSync(kase.config, 'utf8');
  prefix = /keyPrefix: "([^"]+)"/.exec(config)![1]!;
}, TIMEOUT);

afterAll(async () => {
  if (h !== undefined) await releaseCliHarness();
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Every value under the case's prefix, strings, hash fields and set members alike. */
async function storedValues(): Promise<string[]> {
  const redis = new Redis(h.env().TG_TEST_REDIS_URL as string);
  try {
    const keys = await redis.keys(`${prefix}*`);
    const values: string[] = [];
    for (const key of keys) {
      const type = await redis.type(key);
      if (type === 'string') values.push((await redis.get(key)) ?? '');
      if (type === 'hash') values.push(...Object.values(await redis.hgetall(key)));
      if (type === 'set') values.push(...(await redis.smembers(key)));
      if (type === 'stream') values.push(JSON.stringify(await redis.xrange(key, '-', '+')));
      values.push(key);
    }
    return values;
  } finally {
    redis.disconnect();
  }
}

const auditOf = (tenantId: string) => h.auditOf(kase, tenantId);

describe('machine clients', () => {
  it(
    'add prints the secret once; list, rotate and remove never print or store it in clear',
    async () => {
      const expiresAt = NOW() + 3600;
      const created = await h.ok<Created>([
        'client',
        'add',
        '--tenant',
        'acme',
        '--name',
        'nightly-export',
        '--scopes',
        'orders:read,orders:write',
        '--expires-at',
        String(expiresAt),
        ...kase.c,
      ]);
      expect(created).toEqual({
        client_id: expect.stringMatching(/^tgc_[a-z2-7]{26}$/),
        client_secret: expect.stringMatching(/^tgs_[A-Za-z0-9_-]{43}$/),
        tenant_id: 'acme',
        name: 'nightly-export',
        scopes: ['orders:read', 'orders:write'],
        created_at: expect.any(Number),
        expires_at: expiresAt,
      });
      const secret = created.client_secret;

      const listed = await h.ok<Record<string, unknown>[]>([
        'client',
        'list',
        '--tenant',
        'acme',
        ...kase.c,
      ]);
      const { client_secret: _, ...view } = created;
      expect(listed).toEqual([{ ...view, rotated_at: null }]);
      expect(JSON.stringify(listed)).not.toContain(secret);
      expect(JSON.stringify(listed)).not.toContain(sha256(secret));

      let values = await storedValues();
      expect(values.some((v) => v.includes(secret))).toBe(false);
      expect(values).toContain(sha256(secret));

      const rotated = await h.ok<Created & { rotated_at: number }>([
        'client',
        'rotate',
        created.client_id,
        ...kase.c,
      ]);
      expect(rotated.client_secret).toMatch(/^tgs_[A-Za-z0-9_-]{43}$/);
      expect(rotated.client_secret).not.toBe(secret);
      expect(rotated.rotated_at).toEqual(expect.any(Number));
      values = await storedValues();
      expect(values).not.toContain(sha256(secret));
      expect(values).toContain(sha256(rotated.client_secret));
      expect(values.some((v) => v.includes(rotated.client_secret))).toBe(false);

      const audit = await auditOf('acme');
      expect(audit).toContain('"event":"client_created"');
      expect(audit).toContain('"event":"client_secret_rotated"');
      expect(audit).not.toContain(secret);
      expect(audit).not.toContain(rotated.client_secret);

      expect(await h.ok(['client', 'remove', created.client_id, ...kase.c])).toEqual({
        client_id: created.client_id,
        tenant_id: 'acme',
        removed: true,
        keys_removed: [],
      });
      expect(await h.ok(['client', 'list', '--tenant', 'acme', ...kase.c])).toEqual([]);
      expect(await h.fails(['client', 'rotate', created.client_id, ...kase.c])).toBe(
        `error: no client ${created.client_id}\n`,
      );
      expect(await auditOf('acme')).toContain('"event":"client_removed"');
    },
    TIMEOUT,
  );

  it(
    'API keys: add prints the key once, list shows ids only, remove and client remove take them',
    async () => {
      const client = await h.ok<Created>([
        'client',
        'add',
        '--tenant',
        'acme',
        '--name',
        'ci',
        '--scopes',
        'orders:read',
        ...kase.c,
      ]);
      const key = await h.ok<KeyCreated>(['client', 'key', 'add', client.client_id, ...kase.c]);
      expect(key).toEqual({
        key_id: expect.stringMatching(/^tgkid_[a-z2-7]{16}$/),
        api_key: expect.stringMatching(/^tgk_[a-z2-7]{16}_[A-Za-z0-9_-]{43}_[0-9A-Za-z]{6}$/),
        client_id: client.client_id,
        tenant_id: 'acme',
        created_at: expect.any(Number),
        expires_at: null,
      });
      // The key names its id, and its checksum holds.
      expect(apiKeyId(key.api_key)).toBe(key.key_id);
      const second = await h.ok<KeyCreated>([
        'client',
        'key',
        'add',
        client.client_id,
        '--expires-at',
        String(NOW() + 60),
        ...kase.c,
      ]);

      const listed = await h.ok<Record<string, unknown>[]>([
        'client',
        'key',
        'list',
        client.client_id,
        ...kase.c,
      ]);
      expect(listed.map((k) => k.key_id)).toEqual([key.key_id, second.key_id].sort());
      expect(listed[0]).not.toHaveProperty('api_key');
      for (const k of [key, second]) {
        expect(JSON.stringify(listed)).not.toContain(k.api_key);
        expect(JSON.stringify(listed)).not.toContain(sha256(k.api_key));
      }
      const values = await storedValues();
      expect(values.some((v) => v.includes(key.api_key) || v.includes(second.api_key))).toBe(false);
      expect(values).toContain(sha256(key.api_key));

      expect(
        await h.ok(['client', 'key', 'remove', client.client_id, key.key_id, ...kase.c]),
      ).toEqual({
        key_id: key.key_id,
        client_id: client.client_id,
        removed: true,
      });
      expect(
        await h.fails(['client', 'key', 'remove', client.client_id, key.key_id, ...kase.c]),
      ).toBe(`error: client ${client.client_id} has no key ${key.key_id}\n`);
      expect(await h.ok(['client', 'remove', client.client_id, ...kase.c])).toMatchObject({
        keys_removed: [second.key_id],
      });
      expect(await storedValues()).not.toContain(sha256(second.api_key));
      const audit = await auditOf('acme');
      expect(audit).toContain('"event":"api_key_created"');
      expect(audit).toContain('"event":"api_key_removed"');
      expect(audit).not.toContain(key.api_key);
      expect(audit).not.toContain(second.api_key);
    },
    TIMEOUT,
  );

  it(
    'refuses personal and unknown tenants, bad scopes and expiries, unknown clients',
    async () => {
      const users = await h.ok<{ user_email: string; tenant_id: string }[]>([
        'user',
        'list',
        ...kase.c,
      ]);
      const personal = users.find((u) => u.user_email === ALICE.email)!.tenant_id;
      const add = ['client', 'add', '--name', 'x'];
      // One at a time: each run starts a Node process, and a loaded machine times parallel ones out.
      const mine = await h.fails([...add, '--tenant', personal, ...kase.c]);
      const nowhere = await h.fails([...add, '--tenant', 'nowhere', ...kase.c]);
      const spaced = await h.fails([...add, '--tenant', 'acme', '--scopes', 'a b', ...kase.c]);
      const past = await h.fails([...add, '--tenant', 'acme', '--expires-at', '1000', ...kase.c]);
      const unknown = await h.fails(['client', 'remove', 'tgc_nobody', ...kase.c]);
      const keyless = await h.fails(['client', 'key', 'add', 'tgc_nobody', ...kase.c]);
      expect(mine).toBe(
        `error: ${personal} is a personal tenant: machine clients belong to org tenants\n`,
      );
      expect(nowhere).toBe('error: no tenant nowhere\n');
      expect(spaced).toMatch(/^error: --scopes must be a comma-separated list of OAuth scopes/);
      expect(past).toBe('error: --expires-at must be a Unix time (seconds) in the future\n');
      expect(unknown).toBe('error: no client tgc_nobody\n');
      expect(keyless).toBe('error: no client tgc_nobody\n');
    },
    TIMEOUT,
  );

  it(
    'tenant remove takes its clients and keys along',
    async () => {
      const addInitech = () =>
        h.ok([
          'tenant',
          'add',
          'initech',
          '--name',
          'I',
          '--region',
          'r',
          '--created-by',
          BOB.email,
          ...kase.c,
        ]);
      await addInitech();
      const client = await h.ok<Created>([
        'client',
        'add',
        '--tenant',
        'initech',
        '--name',
        'n',
        ...kase.c,
      ]);
      const key = await h.ok<KeyCreated>(['client', 'key', 'add', client.client_id, ...kase.c]);
      await h.ok(['tenant', 'remove', 'initech', ...kase.c]);
      await addInitech();
      expect(await h.ok(['client', 'list', '--tenant', 'initech', ...kase.c])).toEqual([]);
      expect(await h.fails(['client', 'key', 'list', client.client_id, ...kase.c])).toBe(
        `error: no client ${client.client_id}\n`,
      );
      const values = await storedValues();
      expect(values).not.toContain(sha256(key.api_key));
      expect(values).not.toContain(sha256(client.client_secret));
    },
    TIMEOUT,
  );
});

/**
 * Issue 42, finding 3: one rule for a client's scopes, whoever makes it. The
 * operator (no role) is bounded by `authorization.clientScopes`; a tenant
 * admin also by their role's scopes. A refusal is the same error through the
 * CLI as through the API, and the CLI prints no secret then.
 */
describe('client scopes, the CLI and the API alike', () => {
  const SCOPED = [
    'authorization:',
    '  roles: { admin: [orders:read], member: [] }',
    '  clientScopes: [orders:read, platform:ops]',
  ].join('\n');

  it(
    'client add refuses a scope outside clientScopes with the API’s error, and prints no secret',
    async () => {
      const scoped = h.newCase(SCOPED);
      await h.ok(['keys', 'add', ...scoped.c]);
      await h.ok(['seed', h.writeSeed(scoped, SEED), ...scoped.c]);
      const add = ['client', 'add', '--tenant', 'acme', '--name', 'x', '--scopes'];

      const refused = await h.fails([...add, 'orders:read,exports:run', ...scoped.c]);
      expect(refused).toBe(
        'error: invalid_request: Invalid scopes: exports:run is not a scope a machine client may hold.\n',
      );
      expect(await h.ok(['client', 'list', '--tenant', 'acme', ...scoped.c])).toEqual([]);
      // The operator has no role: a scope clientScopes allows is given, though no admin's role holds it.
      const ops = await h.ok<Created>([...add, 'platform:ops', ...scoped.c]);
      expect(ops.scopes).toEqual(['platform:ops']);

      const gw = await h.serve(scoped);
      try {
        const login = await fetch(`${gw.base}/1/token?tenant_id=acme`, {
          headers: { authorization: basic(ALICE.email, ALICE.password) },
        });
        const { access_token } = (await login.json()) as { access_token: string };
        const create = (scopes: string[]) =>
          fetch(`${gw.base}/1/tenants/acme/clients`, {
            method: 'POST',
            headers: { authorization: bearer(access_token), 'content-type': 'application/json' },
            body: JSON.stringify({ name: 'x', scopes }),
          });
        const api = await expectError(
          await create(['orders:read', 'exports:run']),
          400,
          'invalid_request',
        );
        expect(refused).toBe(`error: ${api.error}: ${api.error_description}\n`);
        // The admin is bounded by their role as well: platform:ops is not theirs to give.
        const beyondRole = await expectError(
          await create(['platform:ops']),
          400,
          'invalid_request',
        );
        expect(beyondRole.error_description).toBe(
          'Invalid scopes: platform:ops is not a scope a machine client may hold.',
        );
        expect((await create(['orders:read'])).status).toBe(201);
      } finally {
        expect(await gw.stop()).toBe(0);
      }
      const listed = await h.ok<Created[]>(['client', 'list', '--tenant', 'acme', ...scoped.c]);
      expect(listed.map((c) => c.scopes)).toEqual(
        expect.arrayContaining([['platform:ops'], ['orders:read']]),
      );
      expect(listed).toHaveLength(2);
    },
    TIMEOUT,
  );
});

describe('member roles', () => {
  it(
    'the creator is admin; member add --role; member role ends the member’s tokens for the tenant',
    async () => {
      type Members = { members: { user_email: string; role: string }[] };
      const roles = async () =>
        Object.fromEntries(
          (await h.ok<Members>(['member', 'list', 'acme', ...kase.c])).members.map((m) => [
            m.user_email,
            m.role,
          ]),
        );
      expect(await roles()).toEqual({ [ALICE.email]: 'admin', [BOB.email]: 'member' });
      await h.ok(['member', 'add', 'globex', ALICE.email, '--role', 'admin', ...kase.c]);
      expect(
        (await h.ok<Members>(['member', 'list', 'globex', ...kase.c])).members.map((m) => m.role),
      ).toEqual(['admin']);
      expect(await h.fails(['member', 'role', 'acme', BOB.email, 'owner', ...kase.c])).toBe(
        'error: the role must be admin or member\n',
      );
      expect(await h.fails(['member', 'add', 'acme', BOB.email, '--role', 'root', ...kase.c])).toBe(
        'error: the role must be admin or member\n',
      );

      const gw = await h.serve(kase);
      try {
        const login = await fetch(`${gw.base}/1/token?tenant_id=acme`, {
          headers: { authorization: basic(BOB.email, BOB.password) },
        });
        expect(login.status).toBe(200);
        const { access_token: token } = (await login.json()) as { access_token: string };
        const record = () =>
          fetch(`${gw.base}/1/tenants/acme`, { headers: { authorization: bearer(token) } });
        expect((await record()).status).toBe(200);

        // The same role again changes nothing: the token still works.
        await h.ok(['member', 'role', 'acme', BOB.email, 'member', ...kase.c]);
        expect((await record()).status).toBe(200);

        const after = await h.ok<Members>([
          'member',
          'role',
          'acme',
          BOB.email,
          'admin',
          ...kase.c,
        ]);
        expect(after.members.find((m) => m.user_email === BOB.email)?.role).toBe('admin');
        await expectError(await record(), 401, 'invalid_token');
      } finally {
        expect(await gw.stop()).toBe(0);
      }
      expect(await roles()).toEqual({ [ALICE.email]: 'admin', [BOB.email]: 'admin' });
      const audit = await auditOf('acme');
      expect(audit).toMatch(/"event":"member_role_changed".*"role":"admin"/);
      expect(audit.match(/member_role_changed/g)).toHaveLength(1);
      expect(await h.fails(['member', 'role', 'globex', BOB.email, 'admin', ...kase.c])).toBe(
        `error: ${BOB.email} is not a member of globex\n`,
      );
    },
    TIMEOUT,
  );
});
