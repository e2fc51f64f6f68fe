import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createBruteForceGuard } from '../../src/auth/passwords/brute-force.js';
import { createAccounts, type Accounts } from '../../src/auth/accounts.js';
import { loadKeySet } from '../../src/auth/tokens/keys.js';
import { createBcryptHasher, type PasswordHasher } from '../../src/auth/passwords/passwords.js';
import {
  applySeed,
  parseSeedText,
  readSeedFile,
  SeedError,
  type SeedData,
} from '../../src/auth/seed.js';
import type { KeyRing } from '../../src/auth/tokens/tokens.js';
import { GatewayError } from '../../src/errors.js';
import { createMemoryStore, type Store } from '../../src/store/index.js';
import { verifyDomains } from '../support/verified-domains.js';

/** What `accounts.logIn` takes: an e-mail and a password. */
const basic = (email: string, password: string) => ({ email, password });

/** The problems of a seed that must be refused (fails the test when it is accepted). */
function problemsOf(text: string): string[] {
  try {
    parseSeedText(text, 'seed.yaml');
  } catch (err) {
    expect(err).toBeInstanceOf(SeedError);
    expect((err as SeedError).message).toMatch(/^invalid seed seed\.yaml:\n/);
    return (err as SeedError).problems;
  }
  throw new Error(`expected a SeedError for:\n${text}`);
}

/** What a run that changes nothing reports. */
const NOTHING_CHANGED = {
  usersCreated: 0,
  passwordsChanged: 0,
  tenantsCreated: 0,
  tenantsUpdated: 0,
  membershipsAdded: 0,
};

const ALICE = '  - { email: alice@example.com, password: "alice-password-1" }';
const BOB = '  - { email: bob@example.com, password: "bob-password-1" }';

describe('seed validation', () => {
  it('accepts the demo seed shipped in config/', async () => {
    const seed = await readSeedFile(resolve(import.meta.dirname, '../../config/demo-seed.yaml'));
    expect(seed.users.map((u) => u.email)).toEqual(['alice@example.com', 'bob@example.com']);
    expect(seed.tenants.map((t) => t.tenant_id)).toEqual(['acme', 'globex']);
  });

  it('an empty file is an empty seed', () => {
    expect(parseSeedText('', 'seed.yaml')).toEqual({ users: [], tenants: [] });
  });

  it('fills type orgtenant and empty members', () => {
    const seed = parseSeedText(
      `users:\n${ALICE}\ntenants:\n  - { tenant_id: acme, name: Acme, cloud_region: eu-west-1, created_by: alice@example.com }`,
      'seed.yaml',
    );
    expect(seed.tenants[0]).toEqual({
      tenant_id: 'acme',
      type: 'orgtenant',
      name: 'Acme',
      cloud_region: 'eu-west-1',
      created_by: 'alice@example.com',
      members: [],
    });
  });

  it('names a bad e-mail by its index', () => {
    expect(
      problemsOf(`users:\n${ALICE}\n  - { email: not-an-email, password: "12345678" }`),
    ).toEqual(['users[1].email: must be an e-mail address']);
  });

  it('names a member that is not among the users', () => {
    const text = [
      'users:',
      ALICE,
      'tenants:',
      '  - tenant_id: acme',
      '    name: Acme',
      '    cloud_region: eu-west-1',
      '    created_by: alice@example.com',
      '    members: [ALICE@example.com, mallory@example.com]',
    ].join('\n');
    expect(problemsOf(text)).toEqual([
      'tenants[0].members[1]: mallory@example.com is not among users',
    ]);
  });

  it('names a member that is not an e-mail', () => {
    const text = `users:\n${ALICE}\ntenants:\n  - { tenant_id: acme, name: A, cloud_region: r, created_by: alice@example.com, members: [alice@example.com, 42] }`;
    expect(problemsOf(text)).toEqual(['tenants[0].members[1]: must be a string, not a number']);
  });

  it.each([
    ['neither', '{ email: alice@example.com }'],
    [
      'both',
      `{ email: alice@example.com, password: "alice-password-1", password_hash: "$2b$04$${'a'.repeat(53)}" }`,
    ],
  ])('needs exactly one of password and password_hash: %s', (_name, user) => {
    expect(problemsOf(`users:\n  - ${user}`)).toEqual([
      'users[0]: needs exactly one of password, password_hash',
    ]);
  });

  it.each([
    ['too short', '"short"', 'users[0].password: must be 8 to 72 bytes'],
    ['too long', `"${'x'.repeat(73)}"`, 'users[0].password: must be 8 to 72 bytes'],
    ['multi-byte over 72 bytes', `"${'é'.repeat(37)}"`, 'users[0].password: must be 8 to 72 bytes'],
    [
      'a control character',
      '"alice-pass\\u0007word"',
      'users[0].password: must not contain control characters (HTTP Basic could not carry them)',
    ],
    ['a number', '12345678', 'users[0].password: must be a string, not a number'],
  ])('password %s', (_name, value, problem) => {
    expect(problemsOf(`users:\n  - { email: alice@example.com, password: ${value} }`)).toEqual([
      problem,
    ]);
  });

  it('password_hash must be a bcrypt hash', () => {
    expect(
      problemsOf('users:\n  - { email: alice@example.com, password_hash: "sha256:abc" }'),
    ).toEqual(['users[0].password_hash: must be a bcrypt hash']);
  });

  it.each([
    [
      'an upper-case id',
      'Acme',
      'tenants[0].tenant_id: must be a lower-case DNS label (a-z 0-9 - _), not "current"',
    ],
    [
      '"current"',
      'current',
      'tenants[0].tenant_id: must be a lower-case DNS label (a-z 0-9 - _), not "current"',
    ],
  ])('tenant_id: %s', (_name, id, problem) => {
    const text = `users:\n${ALICE}\ntenants:\n  - { tenant_id: ${id}, name: A, cloud_region: r, created_by: alice@example.com }`;
    expect(problemsOf(text)).toEqual([problem]);
  });

  it('refuses a personal tenant type', () => {
    const text = `users:\n${ALICE}\ntenants:\n  - { tenant_id: acme, type: usertenant, name: A, cloud_region: r, created_by: alice@example.com }`;
    expect(problemsOf(text)).toEqual([
      'tenants[0].type: must be orgtenant (personal tenants come with their user)',
    ]);
  });

  it('names missing tenant keys', () => {
    expect(problemsOf(`users:\n${ALICE}\ntenants:\n  - { tenant_id: acme }`)).toEqual([
      'tenants[0].name: is required',
      'tenants[0].cloud_region: is required',
      'tenants[0].created_by: is required',
    ]);
  });

  it('names unknown keys with the nearest known one', () => {
    expect(
      problemsOf(
        'users:\n  - { email: alice@example.com, pasword: "alice-password-1" }\nusres: []',
      ),
    ).toEqual([
      'users[0].pasword: unknown key (did you mean "password"?)',
      'users[0]: needs exactly one of password, password_hash',
      'usres: unknown key (did you mean "users"?)',
    ]);
  });

  it('refuses duplicate e-mails (case-insensitive) and tenant ids', () => {
    const tenant =
      '  - { tenant_id: acme, name: A, cloud_region: r, created_by: alice@example.com }';
    const text = [
      'users:',
      ALICE,
      BOB,
      '  - { email: " Alice@Example.COM", password: "another-password" }',
      'tenants:',
      tenant,
      tenant,
    ].join('\n');
    expect(problemsOf(text)).toEqual([
      'users[2].email: duplicates users[0].email',
      'tenants[1].tenant_id: duplicates tenants[0].tenant_id',
    ]);
  });

  it('reports YAML problems as SeedErrors', () => {
    expect(problemsOf('users: []\nusers: []')).toEqual([
      'YAML: Map keys must be unique at line 2, column 1',
    ]);
    expect(problemsOf('users: [')[0]).toMatch(/^YAML: .* at line \d+, column \d+$/);
    expect(problemsOf('- a\n- b')).toEqual([
      '(top level): must be a mapping with users and tenants',
    ]);
  });

  it('a missing file is a SeedError naming the file', async () => {
    const err = await readSeedFile('/nonexistent/seed.yaml').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SeedError);
    expect((err as SeedError).message).toBe(
      'invalid seed /nonexistent/seed.yaml:\n  cannot read the file: ENOENT',
    );
  });

  it('reads a file from disk', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tg-seed-'));
    try {
      writeFileSync(join(dir, 'seed.yaml'), `users:\n${ALICE}\n`);
      expect((await readSeedFile(join(dir, 'seed.yaml'))).users).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('applying a seed', () => {
  let passwords: PasswordHasher;
  let keyring: KeyRing;

  beforeAll(async () => {
    passwords = await createBcryptHasher({ cost: 4 });
    keyring = { current: await loadKeySet(undefined, { warn() {} }) };
  });

  interface World {
    store: Store;
    accounts: Accounts;
    apply(seed: SeedData, now: number): ReturnType<typeof applySeed>;
  }

  function world(): World {
    const store = createMemoryStore();
    const accounts = createAccounts({
      store,
      passwords,
      keyring,
      tokens: {
        issuer: 'tenant-gateway',
        audience: 'tenant-api',
        ttlSeconds: 3600,
        algorithms: ['EdDSA', 'ES256'],
        clockSkewSeconds: 30,
      },
      bruteForce: createBruteForceGuard(store, {
        login: {
          perEmail: 10,
          perIp: 100,
          windowSeconds: 900,
          maxQueuedPerEmail: 4,
          maxQueuedPerIp: 8,
        },
        signup: { perIp: 20, windowSeconds: 3600 },
      }),
      cloudRegion: 'test-region',
    });
    return {
      store,
      accounts,
      apply: (seed, now) => applySeed(seed, { store, accounts, passwords, now: () => now }),
    };
  }

  const seedText = (alicePassword = 'alice-password-1', acmeName = 'Acme') =>
    [
      'users:',
      `  - { email: Alice@Example.com, password: "${alicePassword}", name: Alice }`,
      BOB,
      'tenants:',
      `  - { tenant_id: acme, name: ${acmeName}, cloud_region: eu-west-1, created_by: ALICE@example.com, members: [alice@example.com, bob@example.com] }`,
      '  - { tenant_id: globex, name: Globex, cloud_region: us-east-1, created_by: bob@example.com, members: [bob@example.com] }',
    ].join('\n');
  const seedOf = (text: string) => parseSeedText(text, 'seed.yaml');

  async function snapshot(store: Store) {
    const users = await store.users.listUsers();
    return {
      users: users.map((u) => ({ id: u.id, email: u.email, v: u.sessionVersion })),
      tenants: await store.tenants.listTenants(),
      members: {
        acme: await store.memberships.listMembers('acme'),
        globex: await store.memberships.listMembers('globex'),
      },
    };
  }

  it('creates users with personal tenants, org tenants and memberships', async () => {
    const w = world();
    expect(await w.apply(seedOf(seedText()), 1000)).toEqual({
      usersCreated: 2,
      passwordsChanged: 0,
      tenantsCreated: 2,
      tenantsUpdated: 0,
      membershipsAdded: 3,
    });
    const alice = await w.store.users.findUserByEmail('alice@example.com');
    const bob = await w.store.users.findUserByEmail('bob@example.com');
    expect(alice).toMatchObject({ email: 'alice@example.com', name: 'Alice' });
    expect(bob?.email).toBe('bob@example.com');
    expect(await w.store.tenants.getTenant('acme')).toEqual({
      tenantId: 'acme',
      type: 'orgtenant',
      name: 'Acme',
      createdAt: 1000,
      modifiedAt: 1000,
      cloudRegion: 'eu-west-1',
      createdBy: 'alice@example.com',
    });
    expect(await w.store.memberships.listMembers('acme')).toEqual([alice?.id, bob?.id].sort());
    expect(await w.store.memberships.listMembers('globex')).toEqual([bob?.id]);
    const personal = await w.store.tenants.getTenant(alice?.personalTenantId as string);
    expect(personal).toMatchObject({ type: 'usertenant', cloudRegion: 'test-region' });
    expect(
      (await w.accounts.logIn(basic('alice@example.com', 'alice-password-1'), '127.0.0.1')).id,
    ).toBe(alice?.id);
  });

  it('applied twice, the second run changes nothing', async () => {
    const w = world();
    const seed = seedOf(seedText());
    await w.apply(seed, 1000);
    const before = await snapshot(w.store);
    expect(await w.apply(seed, 2000)).toEqual(NOTHING_CHANGED);
    expect(await snapshot(w.store)).toEqual(before);
    expect(before.tenants.find((t) => t.tenantId === 'acme')?.modifiedAt).toBe(1000);
  });

  it('email_verified (issue 45): a new user verified at creation, an existing one marked, never unmarked', async () => {
    const w = world();
    await w.apply(seedOf(seedText()), 1000);
    const verifiedAt = async (email: string) =>
      (await w.store.users.findUserByEmail(email))?.emailVerifiedAt;
    // Without it, the operator vouches for nothing.
    expect(await verifiedAt('alice@example.com')).toBeUndefined();
    const marked = seedText().replace('name: Alice }', 'name: Alice, email_verified: true }');
    await w.apply(seedOf(marked), 2000);
    expect(await verifiedAt('alice@example.com')).toBe(2000);
    expect(await verifiedAt('bob@example.com')).toBeUndefined();
    await w.apply(seedOf(seedText()), 3000);
    expect(await verifiedAt('alice@example.com')).toBe(2000);
    const fresh = world();
    await fresh.apply(seedOf(marked), 4000);
    expect((await fresh.store.users.findUserByEmail('alice@example.com'))?.emailVerifiedAt).toEqual(
      expect.any(Number),
    );
    expect((await fresh.store.users.findUserByEmail('bob@example.com'))?.emailVerifiedAt).toBe(
      undefined,
    );
  });

  it('a changed password is replaced and ends only that user’s sessions', async () => {
    const w = world();
    await w.apply(seedOf(seedText()), 1000);
    const before = await snapshot(w.store);
    const alice = await w.store.users.findUserByEmail('alice@example.com');
    const bob = await w.store.users.findUserByEmail('bob@example.com');

    const summary = await w.apply(seedOf(seedText('alice-password-2')), 2000);
    expect(summary).toEqual({ ...NOTHING_CHANGED, passwordsChanged: 1 });
    expect(await w.store.users.getSessionVersion(alice?.id as string)).toBe(
      (alice?.sessionVersion as number) + 1,
    );
    expect(await w.store.users.getSessionVersion(bob?.id as string)).toBe(bob?.sessionVersion);
    const after = await snapshot(w.store);
    expect(after.users.map((u) => u.id)).toEqual(before.users.map((u) => u.id));

    await expect(
      w.accounts.logIn(basic('alice@example.com', 'alice-password-1'), '127.0.0.1'),
    ).rejects.toMatchObject({ code: 'invalid_credentials' });
    expect(
      (await w.accounts.logIn(basic('alice@example.com', 'alice-password-2'), '127.0.0.1')).id,
    ).toBe(alice?.id);
    // and the new password is now what the seed says: nothing more to change
    expect((await w.apply(seedOf(seedText('alice-password-2')), 3000)).passwordsChanged).toBe(0);
  });

  it('a changed tenant is updated, keeping its creation time', async () => {
    const w = world();
    await w.apply(seedOf(seedText()), 1000);
    const summary = await w.apply(seedOf(seedText('alice-password-1', 'Acme Corp')), 2000);
    expect(summary).toMatchObject({ tenantsCreated: 0, tenantsUpdated: 1, membershipsAdded: 0 });
    expect(await w.store.tenants.getTenant('acme')).toMatchObject({
      name: 'Acme Corp',
      createdAt: 1000,
      modifiedAt: 2000,
    });
    expect((await w.store.tenants.getTenant('globex'))?.modifiedAt).toBe(1000);
  });

  it('adds members but never removes them', async () => {
    const w = world();
    await w.apply(seedOf(seedText()), 1000);
    const bob = await w.store.users.findUserByEmail('bob@example.com');
    const fewer = seedText().replace(
      'members: [alice@example.com, bob@example.com]',
      'members: []',
    );
    expect((await w.apply(seedOf(fewer), 2000)).membershipsAdded).toBe(0);
    expect(await w.store.memberships.isMember('acme', bob?.id as string)).toBe(true);
  });

  it('password_hash users can log in, and a second run keeps their hash', async () => {
    const w = world();
    const hash = await passwords.hash('hashed-password-1');
    const seed = seedOf(`users:\n  - { email: carol@example.com, password_hash: "${hash}" }`);
    expect((await w.apply(seed, 1000)).usersCreated).toBe(1);
    const carol = await w.accounts.logIn(
      basic('carol@example.com', 'hashed-password-1'),
      '127.0.0.1',
    );
    expect(carol.email).toBe('carol@example.com');
    expect(carol.passwordHash).toBe(hash);
    expect(await w.apply(seed, 2000)).toEqual(NOTHING_CHANGED);
    expect(await w.store.users.getSessionVersion(carol.id)).toBe(carol.sessionVersion);
  });

  it('a new password_hash replaces the old one and ends sessions', async () => {
    const w = world();
    const first = await passwords.hash('hashed-password-1');
    const second = await passwords.hash('hashed-password-2');
    const seedWith = (hash: string) =>
      seedOf(`users:\n  - { email: carol@example.com, password_hash: "${hash}" }`);
    await w.apply(seedWith(first), 1000);
    const carol = await w.store.users.findUserByEmail('carol@example.com');
    expect((await w.apply(seedWith(second), 2000)).passwordsChanged).toBe(1);
    expect(await w.store.users.getSessionVersion(carol?.id as string)).toBe(
      (carol?.sessionVersion as number) + 1,
    );
    await expect(
      w.accounts.logIn(basic('carol@example.com', 'hashed-password-1'), '127.0.0.1'),
    ).rejects.toBeInstanceOf(GatewayError);
    expect(
      (await w.accounts.logIn(basic('carol@example.com', 'hashed-password-2'), '127.0.0.1')).id,
    ).toBe(carol?.id);
  });

  it('refuses a tenant id that is a personal tenant, before writing anything', async () => {
    const w = world();
    await w.apply(seedOf(seedText()), 1000);
    const alice = await w.store.users.findUserByEmail('alice@example.com');
    const personal = alice?.personalTenantId as string;
    const seed = seedOf(
      [
        'users:',
        '  - { email: zed@example.com, password: "zed-password-1" }',
        'tenants:',
        `  - { tenant_id: ${personal}, name: Hijack, cloud_region: r, created_by: zed@example.com, members: [zed@example.com] }`,
      ].join('\n'),
    );
    const err = await w.apply(seed, 2000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SeedError);
    expect((err as SeedError).problems).toEqual([
      `tenants[0].tenant_id: ${personal} is a personal tenant`,
    ]);
    expect(await w.store.users.findUserByEmail('zed@example.com')).toBeNull();
    expect(await w.store.tenants.getTenant(personal)).toMatchObject({ type: 'usertenant' });
  });

  it('creates an address of a domain a tenant has verified, which signup and another IdP may not (issue 42)', async () => {
    const w = world();
    await w.apply(seedOf(seedText()), 1000);
    await verifyDomains(w.store, 'acme', ['acme.example']);
    const refused = (input: Parameters<Accounts['signUp']>[0]) =>
      w.accounts.signUp(input).then(
        () => 'created',
        (err: unknown) => (err instanceof GatewayError ? err.code : err),
      );
    /** The sign-up of `email` by the provider of `tenantId`. */
    const byIdpOf = (tenantId: string, email: string) => ({
      email,
      passwordHash: '*',
      createdByIdp: { tenantId, issuer: `https://idp.${tenantId}.example` },
    });
    // Signup's path, and another tenant's provider: the address is acme's.
    expect(await refused({ email: 'dan@acme.example', password: 'dan-password-1' })).toBe(
      'forbidden',
    );
    expect(await refused(byIdpOf('globex', 'dan@ACME.example'))).toBe('forbidden');
    expect(await w.store.users.findUserByEmail('dan@acme.example')).toBeNull();
    // Acme's own provider, and the operator's seed, may.
    expect(await refused(byIdpOf('acme', 'erin@acme.example'))).toBe('created');
    const carol = '  - { email: carol@acme.example, password: "carol-password-1" }';
    const withCarol = seedText().replace('users:\n', `users:\n${carol}\n`);
    expect((await w.apply(seedOf(withCarol), 2000)).usersCreated).toBe(1);
    expect(await w.store.users.findUserByEmail('carol@acme.example')).not.toBeNull();
  });
});
