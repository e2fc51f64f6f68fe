/**
 * The command line (DESIGN §4) as a user runs it: a private redis-server,
 * temp config and key folders. Each test asserts what the user sees: exit
 * code, stdout JSON, stderr text. Most commands run in-process (`runCli`,
 * the harness); the tests of argv, stdin, the environment, --version and
 * serve run the built binary (`h.bin`, `node dist/cli.js`), so it is proven
 * too. Needs `npm run build` first (the `test` script does it).
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayProcess, stopGatewayProcesses } from '../support/gateway-process.js';
import { findFreePort } from '../support/ports.js';
import { openSignIn, postForm } from '../support/sign-in-page.js';
import { startCliHarness, type CliHarness } from './harness.js';

/**
 * A run of the binary is a Node process that loads the config, store and auth
 * code (`serve` alone loads the gateway): ~0.35 s of CPU for a store command,
 * 2–2.5 s of wall time with eight busy loops beside it; in-process, a command
 * costs milliseconds. A run that hangs fails after 30 s in the harness anyway.
 */
const TIMEOUT = 60_000;
const STORE_REQUIRED =
  'error: store.redis is not configured: the in-memory store lives only inside a running gateway.' +
  ' Point --config (or GATEWAY_CONFIG) at a config with store.redis.\n';

let h: CliHarness;

beforeAll(async () => {
  h = await startCliHarness();
});

afterAll(async () => {
  await h?.stop();
});

const SEED = [
  'users:',
  '  - { email: alice@example.com, password: "alice-password-1", name: Alice }',
  '  - { email: bob@example.com, password: "bob-password-1" }',
  'tenants:',
  '  - tenant_id: acme',
  '    name: Acme',
  '    cloud_region: eu-west-1',
  '    created_by: alice@example.com',
  '    members: [alice@example.com, bob@example.com]',
].join('\n');

interface UserRow {
  user_id: string;
  user_email: string;
  tenant_id: string;
}

interface Members {
  tenant_id: string;
  members: { user_id: string; user_email: string }[];
}

describe('config check', () => {
  it(
    'a good file: exit 0, ok with its path',
    async () => {
      const kase = h.newCase();
      const run = await h.bin.cli(['config', 'check', kase.config]);
      expect(run).toEqual({ code: 0, stdout: `ok: ${kase.config}\n`, stderr: '' });
    },
    TIMEOUT,
  );

  it(
    'also checks the seed file the config names',
    async () => {
      const good = h.newCase('seed: ./seed.yaml');
      writeFileSync(join(good.dir, 'seed.yaml'), SEED);
      expect(await h.cli(['config', 'check', good.config])).toEqual({
        code: 0,
        stdout: `ok: ${good.config}\nok: ${join(good.dir, 'seed.yaml')}\n`,
        stderr: '',
      });

      const bad = h.newCase('seed: ./seed.yaml');
      writeFileSync(
        join(bad.dir, 'seed.yaml'),
        'users:\n  - { email: nope, password: "12345678" }',
      );
      const run = await h.cli(['config', 'check', bad.config]);
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(
        `error: invalid configuration ${bad.config}:\n  seed: ${join(bad.dir, 'seed.yaml')}: users[0].email: must be an e-mail address\n`,
      );
    },
    TIMEOUT,
  );

  it(
    'a broken file: exit 1, every problem by key path, no stack trace',
    async () => {
      const file = join(mkdtempSync(join(h.root, 'case-')), 'broken.yaml');
      writeFileSync(
        file,
        [
          'lisen: { port: 8080 }',
          'routes:',
          '  - { prefix: /orders, upstream: "http://127.0.0.1:9001" }',
          '  - { prefix: /billing, upstream: "ftp://billing" }',
          'tokens: { ttlSeconds: "${TTL}" }',
        ].join('\n'),
      );
      const stderr = await h.bin.fails(['config', 'check', file]);
      expect(stderr).toBe(
        [
          `error: invalid configuration ${file}:`,
          '  tokens.ttlSeconds: environment variable TTL is not set',
          '  routes[1].upstream: must be an http(s) URL',
          '  lisen: unknown key (did you mean "listen"?)',
          '',
        ].join('\n'),
      );
    },
    TIMEOUT,
  );

  it(
    'a YAML syntax error or duplicate key: exit 1 with its line',
    async () => {
      const file = join(mkdtempSync(join(h.root, 'case-')), 'dup.yaml');
      writeFileSync(file, 'listen: { port: 1 }\nlisten: { port: 2 }\n');
      expect(await h.fails(['config', 'check', file])).toBe(
        `error: invalid configuration ${file}:\n  YAML: Map keys must be unique at line 2, column 1\n`,
      );
    },
    TIMEOUT,
  );

  it(
    'takes GATEWAY_CONFIG when no file is named, and says so when neither is given',
    async () => {
      const kase = h.newCase();
      const run = await h.bin.cli(['config', 'check'], { env: { GATEWAY_CONFIG: kase.config } });
      expect(run).toEqual({ code: 0, stdout: `ok: ${kase.config}\n`, stderr: '' });
      expect(await h.bin.fails(['config', 'check'])).toBe(
        'error: name a config file or set GATEWAY_CONFIG\n',
      );
    },
    TIMEOUT,
  );

  it(
    'a missing file',
    async () => {
      const file = join(h.root, 'no-such.yaml');
      expect(await h.fails(['config', 'check', file])).toBe(
        `error: invalid configuration ${file}:\n  cannot read the file: ENOENT\n`,
      );
    },
    TIMEOUT,
  );
});

describe('every problem in one run (issue 30)', () => {
  /** A config with one problem of each kind; its folder holds none of the files it names. */
  function brokenEverywhere(): { file: string; dir: string; problems: string[] } {
    const dir = mkdtempSync(join(h.root, 'case-'));
    const file = join(dir, 'gateway.yaml');
    writeFileSync(
      file,
      [
        'listen: { host: 127.0.0.1, port: 0 }',
        'lisen: { port: 1 }',
        "store: { redis: { url: 'redis://:${REDIS_PASSWORD}@127.0.0.1:6379/0' } }",
        'tokens: { keys: ./keys, ttlSeconds: "${TOKEN_TTL}" }',
        'seed: ./seed.yaml',
        'sso: { secretsKeyFile: ./sso.key }',
        'routes:',
        "  - { prefix: /orders, upstream: 'https://127.0.0.1:9001', tls: { ca: ./orders-ca.pem } }",
      ].join('\n'),
    );
    return {
      file,
      dir,
      problems: [
        'store.redis.url: environment variable REDIS_PASSWORD is not set',
        'tokens.ttlSeconds: environment variable TOKEN_TTL is not set',
        'lisen: unknown key (did you mean "listen"?)',
        `routes[0].tls.ca: cannot read ${join(dir, 'orders-ca.pem')}`,
        `tokens.keys: no readable directory ${join(dir, 'keys')} (every instance must share one; \`tenant-gateway keys add\` creates it with a key)`,
        `sso.secretsKeyFile: cannot read ${join(dir, 'sso.key')} (every instance must share it; openssl rand -base64 32 makes one)`,
        `seed: ${join(dir, 'seed.yaml')}: cannot read the file: ENOENT`,
      ],
    };
  }

  it(
    'config check: unset variables, a bad key, and the missing TLS file, keys folder and seed, together',
    async () => {
      const { file, problems } = brokenEverywhere();
      expect(await h.fails(['config', 'check', file])).toBe(
        `error: invalid configuration ${file}:\n${problems.map((p) => `  ${p}\n`).join('')}`,
      );
    },
    TIMEOUT,
  );

  it(
    'serve refuses the same config with the same list, before it starts anything',
    async () => {
      const { file, problems } = brokenEverywhere();
      expect(await h.fails(['serve', '--config', file])).toBe(
        `error: invalid configuration ${file}:\n${problems.map((p) => `  ${p}\n`).join('')}`,
      );
    },
    TIMEOUT,
  );

  it(
    'a seed with bad content is listed with the config’s own problems',
    async () => {
      const kase = h.newCase('seed: ./seed.yaml\nsignup: { enabled: maybe }');
      writeFileSync(
        join(kase.dir, 'seed.yaml'),
        'users:\n  - { email: nope, password: "12345678" }',
      );
      rmSync(kase.keys, { recursive: true });
      expect(await h.fails(['config', 'check', kase.config])).toBe(
        [
          `error: invalid configuration ${kase.config}:`,
          '  signup.enabled: must be a boolean, not a string',
          `  tokens.keys: no readable directory ${kase.keys} (every instance must share one; \`tenant-gateway keys add\` creates it with a key)`,
          `  seed: ${join(kase.dir, 'seed.yaml')}: users[0].email: must be an e-mail address`,
          '',
        ].join('\n'),
      );
    },
    TIMEOUT,
  );
});

describe('config check refuses what would break serve', () => {
  it(
    'a tokens.keys folder that does not exist (every replica would mint a key of its own)',
    async () => {
      const kase = h.newCase();
      rmSync(kase.keys, { recursive: true });
      expect(await h.fails(['config', 'check', kase.config])).toBe(
        `error: invalid configuration ${kase.config}:\n  tokens.keys: no readable directory ${kase.keys} (every instance must share one; \`tenant-gateway keys add\` creates it with a key)\n`,
      );
      // `keys add` makes it, and then the config is good.
      await h.ok(['keys', 'add', ...kase.c]);
      expect((await h.cli(['config', 'check', ...kase.c])).code).toBe(0);
    },
    TIMEOUT,
  );

  it(
    'an unreadable TLS file of the store, named by key path',
    async () => {
      const kase = h.newCase();
      writeFileSync(
        kase.config,
        [
          'store: { redis: { url: "rediss://127.0.0.1:6380", tls: { ca: ./no-such-ca.pem } } }',
          'tokens: { keys: ./keys }',
        ].join('\n'),
      );
      expect(await h.fails(['config', 'check', ...kase.c])).toBe(
        `error: invalid configuration ${kase.config}:\n  store.redis.tls.ca: cannot read ${join(kase.dir, 'no-such-ca.pem')}\n`,
      );
    },
    TIMEOUT,
  );

  it(
    'takes --config, repeated: the files are layered, later over earlier',
    async () => {
      const kase = h.newCase();
      const over = join(kase.dir, 'over.yaml');
      writeFileSync(over, 'listen: { port: 70000 }\n');
      expect(await h.fails(['config', 'check', ...kase.c, '--config', over])).toBe(
        `error: invalid configuration ${kase.config} + ${over}:\n  listen.port: must be at most 65535\n`,
      );
      writeFileSync(over, 'listen: { port: 8088 }\n');
      expect(await h.cli(['config', 'check', ...kase.c, '--config', over])).toEqual({
        code: 0,
        stdout: `ok: ${kase.config} + ${over}\n`,
        stderr: '',
      });
    },
    TIMEOUT,
  );
});

describe('--version and health', () => {
  it(
    '--version prints package.json’s version, the one /metrics reports',
    async () => {
      const { version } = JSON.parse(
        readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8'),
      ) as { version: string };
      expect(await h.bin.cli(['--version'])).toEqual({
        code: 0,
        stdout: `${version}\n`,
        stderr: '',
      });
    },
    TIMEOUT,
  );

  it(
    'health asks the admin listener the config names, on loopback for a wildcard host; nothing there: exit 1',
    async () => {
      const port = await findFreePort(); // nothing listens there
      const kase = h.newCase(`admin: { host: 0.0.0.0, port: ${port} }`);
      expect(await h.fails(['health', ...kase.c])).toBe(
        `error: unhealthy: http://127.0.0.1:${port}/healthz: ECONNREFUSED\n`,
      );
    },
    TIMEOUT,
  );

  it(
    'health without an admin listener in the config: exit 1 saying so (the public listener has no /healthz)',
    async () => {
      expect(await h.fails(['health', ...h.newCase().c])).toBe(
        'error: the config has no admin listener (`admin: { host, port }`), so no /healthz to ask: add one, or pass --url\n',
      );
      expect(await h.fails(['health', ...h.newCase('admin: { port: 0 }').c])).toBe(
        'error: admin.port is 0 (a free port chosen at each start): pass --url with the address serve printed\n',
      );
      // The explicit opt-in puts /healthz on listen: health asks there.
      const port = await findFreePort();
      const onListen = h.newCase();
      writeFileSync(
        onListen.config,
        readFileSync(onListen.config, 'utf8').replace(
          'listen: { host: 127.0.0.1, port: 0 }',
          `listen: { host: 127.0.0.1, port: ${port}, opsEndpoints: true }`,
        ),
      );
      expect(await h.fails(['health', ...onListen.c])).toBe(
        `error: unhealthy: http://127.0.0.1:${port}/healthz: ECONNREFUSED\n`,
      );
    },
    TIMEOUT,
  );
});

describe('keys list and retire', () => {
  it(
    'list: kid, algorithm, creation time, which one signs — and no key material',
    async () => {
      const kase = h.newCase();
      const a = await h.ok<{ kid: string }>(['keys', 'add', ...kase.c]);
      const b = await h.ok<{ kid: string }>(['keys', 'add', ...kase.c]);
      const run = await h.cli(['keys', 'list', ...kase.c]);
      expect(run.code).toBe(0);
      expect(run.stdout).not.toMatch(/PRIVATE|BEGIN|"d":/);
      const { keys } = JSON.parse(run.stdout) as {
        keys: { kid: string; alg: string; created_at: string; signing: boolean }[];
      };
      expect(keys.map((k) => [k.kid, k.alg, k.signing])).toEqual([
        [a.kid, 'EdDSA', false],
        [b.kid, 'EdDSA', true],
      ]);
      for (const k of keys) expect(Date.now() - Date.parse(k.created_at)).toBeLessThan(60_000);
    },
    TIMEOUT,
  );

  it(
    'retire: never the signing key; an older one only once its tokens have expired, or --now',
    async () => {
      const kase = h.newCase();
      const old = await h.ok<{ kid: string }>(['keys', 'add', ...kase.c]);
      const signing = await h.ok<{ kid: string }>(['keys', 'add', ...kase.c]);
      // Keys whose names date them: the newer one has signed for years, the older one's tokens are long dead.
      const dated = h.newCase();
      for (const kid of ['20200101T000000Z', '20200102T000000Z']) {
        const { privateKey } = generateKeyPairSync('ed25519');
        writeFileSync(
          join(dated.keys, `${kid}.pem`),
          privateKey.export({ type: 'pkcs8', format: 'pem' }),
        );
      }
      // The refusals remove nothing, and the dated keys are a case of their own: run together.
      const [ofSigning, ofOld, ofUnknown, retiredDated] = await Promise.all([
        h.fails(['keys', 'retire', signing.kid, ...kase.c]),
        h.fails(['keys', 'retire', old.kid, ...kase.c]),
        h.fails(['keys', 'retire', 'no-such-kid', ...kase.c]),
        h.ok<{ retired: string }>(['keys', 'retire', '20200101T000000Z', ...dated.c]),
      ]);
      expect(ofSigning).toMatch(
        new RegExp(`^error: ${signing.kid} signs new tokens: add a newer key`),
      );
      // Tokens live an hour (the default ttl): the older key's may still be valid.
      expect(ofOld).toMatch(
        new RegExp(`^error: tokens signed by ${old.kid} may be valid until \\d{4}-`),
      );
      expect(ofUnknown).toBe(`error: no key no-such-kid in ${kase.keys}\n`);
      expect(readdirSync(kase.keys).sort()).toEqual([`${old.kid}.pem`, `${signing.kid}.pem`]);
      expect(retiredDated.retired).toBe('20200101T000000Z');
      expect(readdirSync(dated.keys)).toEqual(['20200102T000000Z.pem']);
      const retired = await h.ok<{ retired: string }>([
        'keys',
        'retire',
        old.kid,
        '--now',
        ...kase.c,
      ]);
      expect(retired.retired).toBe(old.kid);
      expect(readdirSync(kase.keys)).toEqual([`${signing.kid}.pem`]);
    },
    TIMEOUT,
  );
});

describe('seed', () => {
  it(
    'applied twice: the second run reports zero changes',
    async () => {
      const kase = h.newCase();
      const seed = h.writeSeed(kase, SEED);
      expect(await h.ok(['seed', seed, ...kase.c])).toEqual({
        usersCreated: 2,
        passwordsChanged: 0,
        tenantsCreated: 1,
        tenantsUpdated: 0,
        membershipsAdded: 2,
      });
      const users = await h.ok<UserRow[]>(['user', 'list', ...kase.c]);
      expect(await h.ok(['seed', seed, ...kase.c])).toEqual({
        usersCreated: 0,
        passwordsChanged: 0,
        tenantsCreated: 0,
        tenantsUpdated: 0,
        membershipsAdded: 0,
      });
      expect(await h.ok<UserRow[]>(['user', 'list', ...kase.c])).toEqual(users);
      expect(users.map((u) => u.user_email).sort()).toEqual([
        'alice@example.com',
        'bob@example.com',
      ]);
    },
    TIMEOUT,
  );

  it(
    'an invalid seed: exit 1, the problem by key path, nothing written',
    async () => {
      const kase = h.newCase();
      const seed = h.writeSeed(
        kase,
        'users:\n  - { email: a@example.com, password: "alice-password-1" }\n  - { email: b@example.com, password: short }',
      );
      expect(await h.fails(['seed', seed, ...kase.c])).toBe(
        `error: invalid seed ${seed}:\n  users[1].password: must be 8 to 72 bytes\n`,
      );
      expect(await h.ok(['user', 'list', ...kase.c])).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    'takes the config from GATEWAY_CONFIG',
    async () => {
      const kase = h.newCase();
      const seed = h.writeSeed(kase, SEED);
      const summary = await h.ok(['seed', seed], { env: { GATEWAY_CONFIG: kase.config } });
      expect(summary).toMatchObject({ usersCreated: 2 });
      expect(await h.ok<UserRow[]>(['user', 'list', ...kase.c])).toHaveLength(2);
    },
    TIMEOUT,
  );
});

describe('users', () => {
  it(
    'user add creates an address of a domain a tenant has verified, which signup refuses (issue 42: the operator may)',
    async () => {
      const kase = h.newCase();
      await h.ok(['user', 'add', 'owner@example.com', ...kase.c], { input: 'owner-password-1\n' });
      const tenant = ['tenant', 'add', 'acme', '--name', 'Acme', '--region', 'r'];
      await h.ok([...tenant, '--created-by', 'owner@example.com', ...kase.c]);
      await h.ok(['tenant', 'domain', 'add', 'acme', 'acme.example', '--verified', ...kase.c]);
      const added = await h.ok<UserRow>(['user', 'add', 'NewHire@acme.example', ...kase.c], {
        input: 'newhire-password-1\n',
      });
      expect(added.user_email).toBe('newhire@acme.example');
    },
    TIMEOUT,
  );

  it(
    'user add reads the password from stdin',
    async () => {
      const kase = h.newCase();
      // Through the binary: its stdin is a pipe.
      const added = await h.bin.ok<UserRow>(
        ['user', 'add', 'Carol@Example.com', '--name', 'Carol', ...kase.c],
        {
          input: 'carol-password-1\n',
        },
      );
      expect(added).toEqual({
        user_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        user_email: 'carol@example.com',
        tenant_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      });
      expect(await h.ok<UserRow[]>(['user', 'list', ...kase.c])).toEqual([
        { ...added, disabled: false },
      ]);
      expect(await h.ok(['user', 'disable', 'carol@example.com', ...kase.c])).toMatchObject({
        disabled: true,
        sessions: 'ended',
      });
      expect(await h.ok<UserRow[]>(['user', 'list', ...kase.c])).toEqual([
        { ...added, disabled: true },
      ]);
      expect(await h.fails(['user', 'enable', 'nobody@example.com', ...kase.c])).toBe(
        'error: no user nobody@example.com\n',
      );
    },
    TIMEOUT,
  );

  it(
    'user add reads the password from --password-env',
    async () => {
      const kase = h.newCase();
      const added = await h.ok<UserRow>(
        ['user', 'add', 'dave@example.com', '--password-env', 'DAVE_PW', ...kase.c],
        { env: { DAVE_PW: 'dave-password-1' } },
      );
      expect(added.user_email).toBe('dave@example.com');
      expect(
        await h.fails(['user', 'add', 'erin@example.com', '--password-env', 'UNSET_PW', ...kase.c]),
      ).toBe('error: environment variable UNSET_PW is not set\n');
    },
    TIMEOUT,
  );

  it(
    'a password is never taken from argv',
    async () => {
      const kase = h.newCase();
      const [positional, option, change] = await Promise.all([
        h.bin.fails(['user', 'add', 'mallory@example.com', 'mallory-password-1', ...kase.c], {
          input: 'ignored-password\n',
        }),
        h.bin.fails([
          'user',
          'add',
          'mallory@example.com',
          '--password',
          'mallory-password-1',
          ...kase.c,
        ]),
        h.bin.fails(['user', 'password', 'mallory@example.com', 'mallory-password-2', ...kase.c]),
      ]);
      expect(positional).toMatch(/^error: too many arguments for 'add'\. Expected 1 argument/);
      expect(option).toMatch(/^error: unknown option '--password'/);
      expect(change).toMatch(/^error: too many arguments for 'password'/);
      // Once all three have exited: none of them wrote a user.
      expect(await h.ok(['user', 'list', ...kase.c])).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    'refuses an empty password, a short one, a bad e-mail and a taken e-mail',
    async () => {
      const kase = h.newCase();
      // Only the short password reaches the store (and writes the case's key): run together.
      const [empty, short, badEmail] = await Promise.all([
        h.fails(['user', 'add', 'a@example.com', ...kase.c], { input: '' }),
        h.fails(['user', 'add', 'a@example.com', ...kase.c], { input: 'short\n' }),
        h.fails(['user', 'add', 'not-an-email', ...kase.c], { input: 'long-enough-1\n' }),
      ]);
      expect(empty).toBe(
        'error: no password given: pipe it on stdin or name a variable with --password-env\n',
      );
      expect(short).toBe('error: invalid_request: The password must be 8 to 72 bytes long.\n');
      expect(badEmail).toBe('error: EMAIL must be an e-mail address\n');
      // Refused, a@example.com was not written: it can be added, once.
      await h.ok(['user', 'add', 'a@example.com', ...kase.c], { input: 'long-enough-1\n' });
      expect(
        await h.fails(['user', 'add', 'A@example.com', ...kase.c], { input: 'long-enough-2\n' }),
      ).toMatch(/^error: user_exists: /);
    },
    TIMEOUT,
  );

  it(
    'user password replaces the password; an unknown user is a usage error',
    async () => {
      const kase = h.newCase();
      const added = await h.ok<UserRow>(['user', 'add', 'frank@example.com', ...kase.c], {
        input: 'frank-password-1',
      });
      expect(
        await h.ok(['user', 'password', 'frank@example.com', ...kase.c], {
          input: 'frank-password-2\n',
        }),
      ).toEqual({ user_id: added.user_id, user_email: 'frank@example.com', sessions: 'ended' });
      expect(
        await h.fails(['user', 'password', 'nobody@example.com', ...kase.c], {
          input: 'whatever-password\n',
        }),
      ).toBe('error: no user nobody@example.com\n');
    },
    TIMEOUT,
  );
});

describe('tenants and members', () => {
  it(
    'tenant add, tenant list, member add, member list, member remove',
    async () => {
      const kase = h.newCase();
      await h.addKey(kase);
      // The users and the tenant are independent (--created-by is an e-mail, not a lookup).
      const [carol, dave, created] = await Promise.all([
        h.ok<UserRow>(['user', 'add', 'carol@example.com', ...kase.c], {
          input: 'carol-password-1\n',
        }),
        h.ok<UserRow>(['user', 'add', 'dave@example.com', ...kase.c], {
          input: 'dave-password-1\n',
        }),
        h.ok<Record<string, unknown>>([
          'tenant',
          'add',
          'initech',
          '--name',
          'Initech',
          '--region',
          'eu-west-1',
          '--created-by',
          'Carol@Example.com',
          ...kase.c,
        ]),
      ]);
      expect(created).toEqual({
        tenant_id: 'initech',
        type: 'orgtenant',
        name: 'Initech',
        created_at: expect.any(Number),
        modified_at: created.created_at,
        cloud_region: 'eu-west-1',
        created_by: 'carol@example.com',
      });
      const [tenants, none] = await Promise.all([
        h.ok<{ tenant_id: string; type: string }[]>(['tenant', 'list', ...kase.c]),
        h.ok<Members>(['member', 'list', 'initech', ...kase.c]),
      ]);
      expect(tenants.map((t) => [t.tenant_id, t.type]).sort()).toEqual(
        [
          ['initech', 'orgtenant'],
          [carol.tenant_id, 'usertenant'],
          [dave.tenant_id, 'usertenant'],
        ].sort(),
      );
      expect(none).toEqual({ tenant_id: 'initech', members: [] });

      // From here on each command sees what the one before it did: one at a time.
      await h.ok(['member', 'add', 'initech', 'carol@example.com', ...kase.c]);
      const both = await h.ok<Members>(['member', 'add', 'initech', 'DAVE@example.com', ...kase.c]);
      const expected = [
        // The tenant's creator is its admin.
        { user_id: carol.user_id, user_email: 'carol@example.com', role: 'admin' },
        { user_id: dave.user_id, user_email: 'dave@example.com', role: 'member' },
      ].sort((a, b) => (a.user_id < b.user_id ? -1 : 1));
      expect(both).toEqual({ tenant_id: 'initech', members: expected });
      expect(await h.ok<Members>(['member', 'list', 'initech', ...kase.c])).toEqual(both);

      expect(
        await h.ok<Members>(['member', 'remove', 'initech', 'carol@example.com', ...kase.c]),
      ).toEqual({
        tenant_id: 'initech',
        members: [{ user_id: dave.user_id, user_email: 'dave@example.com', role: 'member' }],
      });
      expect(await h.ok<Members>(['member', 'list', 'initech', ...kase.c])).toEqual({
        tenant_id: 'initech',
        members: [{ user_id: dave.user_id, user_email: 'dave@example.com', role: 'member' }],
      });
    },
    TIMEOUT,
  );

  it(
    'refuses unknown tenants and users, personal tenants, bad ids and missing options',
    async () => {
      const kase = h.newCase();
      await h.addKey(kase);
      const tenant = ['tenant', 'add', 'acme', '--name', 'Acme', '--region', 'r'];
      // Beside the user the later commands need, the refusals that do not depend on her.
      const [carol, unknownTenant, badId, badCreator, noCreator] = await Promise.all([
        h.ok<UserRow>(['user', 'add', 'carol@example.com', ...kase.c], {
          input: 'carol-password-1\n',
        }),
        h.fails(['member', 'list', 'nope', ...kase.c]),
        h.fails([
          'tenant',
          'add',
          'Acme',
          '--name',
          'A',
          '--region',
          'r',
          '--created-by',
          'carol@example.com',
          ...kase.c,
        ]),
        h.fails([...tenant, '--created-by', 'carol', ...kase.c]),
        h.fails([...tenant, ...kase.c]),
      ]);
      expect(unknownTenant).toBe('error: no tenant nope\n');
      expect(badId).toBe(
        'error: tenant id must be a lower-case DNS label (a-z 0-9 - _), not "current"\n',
      );
      expect(badCreator).toBe('error: --created-by must be an e-mail address\n');
      expect(noCreator).toMatch(/^error: required option '--created-by <email>' not specified/);

      // With carol there; none of these changes what another one reads.
      const [, unknownTenantKnownUser, personalMembers, personalId] = await Promise.all([
        h.ok([...tenant, '--created-by', 'carol@example.com', ...kase.c]),
        h.fails(['member', 'add', 'nope', 'carol@example.com', ...kase.c]),
        h.fails(['member', 'add', carol.tenant_id, 'carol@example.com', ...kase.c]),
        h.fails([
          'tenant',
          'add',
          carol.tenant_id,
          '--name',
          'X',
          '--region',
          'r',
          '--created-by',
          'carol@example.com',
          ...kase.c,
        ]),
      ]);
      expect(unknownTenantKnownUser).toBe('error: no tenant nope\n');
      expect(personalMembers).toBe(
        `error: ${carol.tenant_id} is a personal tenant: its membership does not change\n`,
      );
      expect(personalId).toBe(
        `error: ${carol.tenant_id} is a personal tenant; org tenants need an id of their own\n`,
      );

      // With acme there.
      expect(await h.fails(['member', 'add', 'acme', 'nobody@example.com', ...kase.c])).toBe(
        'error: no user nobody@example.com\n',
      );
    },
    TIMEOUT,
  );
});

describe('keys add', () => {
  it(
    'writes a new PEM whose name sorts last',
    async () => {
      const kase = h.newCase();
      const pems = () => readdirSync(kase.keys).filter((f) => f.endsWith('.pem'));
      const first = await h.ok<{ file: string; kid: string }>(['keys', 'add', ...kase.c]);
      expect(first.file).toBe(join(kase.keys, `${first.kid}.pem`));
      expect(pems()).toEqual([`${first.kid}.pem`]);
      const second = await h.ok<{ file: string; kid: string }>(['keys', 'add', ...kase.c]);
      const third = await h.ok<{ file: string; kid: string }>(['keys', 'add', ...kase.c]);
      expect(pems()).toEqual([`${first.kid}.pem`, `${second.kid}.pem`, `${third.kid}.pem`]);
      expect([...pems()].sort().at(-1)).toBe(`${third.kid}.pem`);
      expect(new Set([first.kid, second.kid, third.kid]).size).toBe(3);
    },
    TIMEOUT,
  );

  it(
    'without tokens.keys there is no folder to add to',
    async () => {
      const file = join(mkdtempSync(join(h.root, 'case-')), 'nokeys.yaml');
      writeFileSync(file, 'signup: { enabled: false }\n');
      expect(await h.fails(['keys', 'add', '--config', file])).toBe(
        'error: tokens.keys is not configured: the key is ephemeral, there is no key directory\n',
      );
    },
    TIMEOUT,
  );
});

describe('store commands without store.redis', () => {
  it(
    'fail with a usage error, from --config or from the built-in defaults',
    async () => {
      const file = join(mkdtempSync(join(h.root, 'case-')), 'memory.yaml');
      writeFileSync(file, 'listen: { port: 0 }\n');
      const seed = join(h.root, 'memory-seed.yaml');
      writeFileSync(seed, SEED);
      const refusals = await Promise.all([
        ...[
          ['user', 'list', '--config', file],
          ['tenant', 'list', '--config', file],
          ['member', 'list', 'acme', '--config', file],
          ['user', 'add', 'x@example.com', '--config', file],
          ['user', 'list'],
        ].map((args) => h.fails(args, { input: 'some-password-1\n' })),
        h.fails(['seed', seed], { env: { GATEWAY_CONFIG: file } }),
      ]);
      expect(refusals).toEqual(Array(6).fill(STORE_REQUIRED));
    },
    TIMEOUT,
  );
});

describe('serve', () => {
  it(
    'listens, serves the JWKS and users made by the CLI, and exits 0 on SIGTERM',
    async () => {
      const adminPort = await findFreePort();
      const kase = h.newCase(`admin: { host: 127.0.0.1, port: ${adminPort} }`);
      const key = await h.ok<{ kid: string }>(['keys', 'add', ...kase.c]);
      await Promise.all([
        h.ok(['seed', h.writeSeed(kase, SEED), ...kase.c]),
        h.ok(['user', 'add', 'carol@example.com', ...kase.c], { input: 'carol-password-1\n' }),
      ]);
      await h.ok(['member', 'add', 'acme', 'carol@example.com', ...kase.c]);

      const { base, stop } = await h.serve(kase);
      try {
        expect(Number(new URL(base).port)).toBeGreaterThan(0);
        // Health is on the admin listener the config names, never on the public one.
        const healthz = `http://127.0.0.1:${adminPort}/healthz`;
        expect(await h.cli(['health', ...kase.c])).toEqual({
          code: 0,
          stdout: `ok: ${healthz}\n`,
          stderr: '',
        });
        expect(await h.cli(['health', '--url', healthz, ...kase.c])).toEqual({
          code: 0,
          stdout: `ok: ${healthz}\n`,
          stderr: '',
        });
        expect(await h.fails(['health', '--url', `${base}/healthz`, ...kase.c])).toBe(
          `error: unhealthy: ${base}/healthz answered 404\n`,
        );

        const jwks = await fetch(`${base}/.well-known/jwks.json`);
        expect(jwks.status).toBe(200);
        const body = (await jwks.json()) as { keys: { kid: string; alg: string }[] };
        expect(body.keys.map((k) => k.kid)).toEqual([key.kid]);
        expect(body.keys[0]?.alg).toBe('EdDSA');

        const login = `Basic ${Buffer.from('carol@example.com:carol-password-1').toString('base64')}`;
        const tenants = await fetch(`${base}/1/users/current/tenants`, {
          headers: { authorization: login },
        });
        expect(tenants.status).toBe(200);
        const list = (await tenants.json()) as { tenants: { tenant_id: string }[] };
        expect(list.tenants.map((t) => t.tenant_id)).toContain('acme');
      } finally {
        expect(await stop()).toBe(0);
      }
    },
    TIMEOUT,
  );

  it(
    'a broken config: exit 1 before listening, the problem by key path',
    async () => {
      const kase = h.newCase('routes: [{ prefix: /a, upstream: "nowhere" }]');
      expect(await h.fails(['serve', ...kase.c])).toBe(
        `error: invalid configuration ${kase.config}:\n  routes[0].upstream: must be an http(s) URL\n`,
      );
    },
    TIMEOUT,
  );
});

describe('startup', () => {
  /*
   * What a store command loads: the config, the store and the auth code, never
   * the serving path. `serve` alone imports the gateway (Koa, the proxy and
   * undici, prom-client, OpenTelemetry), which was most of every other
   * command's start-up (docs/architecture.md, "A CLI verb").
   */
  const HOOK = resolve(import.meta.dirname, '../support/loaded-modules.mjs');
  /** Packages and modules of the serving path. */
  const SERVING =
    /\/node_modules\/(koa|@koa|@opentelemetry|prom-client|undici|ws)\/|\/dist\/(gateway|http\/dispatch|api\/app|cli\/serve)\.js$|\/dist\/(gateway\/|proxy|ops\/(metrics|tracing))/;

  it('a store command loads none of the serving path', async () => {
    const kase = h.newCase();
    await h.addKey(kase);
    const list = join(kase.dir, 'loaded-modules.txt');
    const env = { NODE_OPTIONS: `--import=${HOOK}`, TG_LOADED_MODULES: list };
    expect(await h.bin.ok(['user', 'list', ...kase.c], { env })).toEqual([]);
    const loaded = readFileSync(list, 'utf8').split('\n');
    // The record is whole: the core the command ran on is in it.
    expect(
      loaded.filter((url) => /\/dist\/(core\/create-core|cli\/admin)\.js$/.test(url)),
    ).toHaveLength(2);
    expect(loaded.filter((url) => SERVING.test(url))).toEqual([]);
  });

  /**
   * The optional parts' packages, each 0.1–0.4 s of CPU to load: `serve`
   * loads one only when the config turns its feature on
   * (docs/architecture.md, "Start-up cost").
   */
  const OPTIONAL: Record<string, RegExp> = {
    tracing: /\/node_modules\/@opentelemetry\/(sdk-trace-base|exporter-trace-otlp-http)\//,
    passkeys: /\/node_modules\/@simplewebauthn\/server\//,
    extAuthz: /\/node_modules\/@grpc\/(grpc-js|proto-loader)\//,
    mail: /\/node_modules\/nodemailer\//,
    redis: /\/node_modules\/ioredis\//,
  };
  /** The optional parts whose packages a serve recorded in `list` loaded. */
  function partsLoaded(list: string): string[] {
    const loaded = readFileSync(list, 'utf8').split('\n');
    // The record is whole: the composition root the start ran is in it.
    expect(loaded.filter((url) => /\/dist\/gateway\.js$/.test(url))).toHaveLength(1);
    return Object.entries(OPTIONAL).flatMap(([part, pattern]) =>
      loaded.some((url) => pattern.test(url)) ? [part] : [],
    );
  }

  it(
    'serve without the optional parts loads none of them',
    async () => {
      const list = join(mkdtempSync(join(h.root, 'modules-')), 'loaded-modules.txt');
      try {
        await startGatewayProcess(
          'listen: { host: 127.0.0.1, port: 0 }\nroutes: [{ prefix: /a, upstream: "http://127.0.0.1:9" }]\n',
          { env: { NODE_OPTIONS: `--import=${HOOK}`, TG_LOADED_MODULES: list } },
        );
        expect(partsLoaded(list)).toEqual([]);
      } finally {
        await stopGatewayProcesses();
      }
    },
    TIMEOUT,
  );

  it(
    'serve with all of them loads each, and answers a passkey sign-in from the library it loaded',
    async () => {
      const closed = await findFreePort();
      const kase = h.newCase(
        [
          'forwardAuth: { host: 127.0.0.1, port: 0, grpc: true, grpcPort: 0 }',
          `tracing: { enabled: true, otlpEndpoint: "http://127.0.0.1:${closed}/v1/traces" }`,
          `mail: { smtp: "smtp://127.0.0.1:${closed}", from: "Gateway <no-reply@gw.example>" }`,
          'publicUrl: http://localhost:8080',
          'sessions: { enabled: true, cookie: { secure: false } }',
          'mfa: { passkeys: { enabled: true } }',
        ].join('\n'),
      );
      await h.addKey(kase);
      const list = join(kase.dir, 'loaded-modules.txt');
      const { base, stop } = await h.serve(kase, {
        env: { NODE_OPTIONS: `--import=${HOOK}`, TG_LOADED_MODULES: list },
      });
      try {
        expect(partsLoaded(list)).toEqual(Object.keys(OPTIONAL));
        const page = await openSignIn(base);
        const res = await postForm(
          base,
          '/1/sign-in/passkey/options',
          { csrf_token: page.token },
          { cookie: page.preSession, headers: { accept: 'application/json' } },
        );
        expect(res.status).toBe(200);
        expect(await res.json()).toMatchObject({ rpId: 'localhost', userVerification: 'required' });
      } finally {
        expect(await stop()).toBe(0);
      }
    },
    TIMEOUT,
  );
});
