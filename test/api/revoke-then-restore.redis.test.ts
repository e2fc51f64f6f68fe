/**
 * Issue 30, item 1: a token issued before a revoking event is never accepted
 * again, whatever is restored afterwards — the membership added back, the
 * tenant id re-created, the user enabled again, a user of the same e-mail
 * signed up again, the old password set again. Each pair is made as an
 * operator or a user makes it (the CLI's functions, the api), on two gateways
 * sharing one store: a single redis-server, and a Redis Cluster. Each old
 * token is first accepted (so cached) by both gateways.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  memberChange,
  tenantAdd,
  tenantRemove,
  userAdd,
  userRemove,
  userSetDisabled,
} from '../../src/cli/admin.js';
import { validateConfig, type LoadedConfig } from '../../src/config/index.js';
import { printedJson } from '../support/captured-stdout.js';
import { expectError } from '../support/expect-error.js';
import { bearer, uniquePrefix, type TestGateway } from '../support/gateway.js';
import {
  ALICE,
  BOB,
  startIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../support/identity-fixture.js';
import { startCluster } from '../support/redis-topologies.js';
import { startEchoUpstream, type Upstream } from '../support/upstream.js';
import { changePassword, signUp } from '../support/account-requests.js';

const TIMEOUT = 60_000;

/** A store topology: its `store.redis` keys, and how to stop it. */
interface Topology {
  redis: Record<string, unknown> | undefined;
  stop(): Promise<void>;
}

const topologies: [string, () => Promise<Topology>][] = [
  // The fixture's own redis-server.
  ['a single Redis', async () => ({ redis: undefined, stop: async () => {} })],
  [
    'a Redis Cluster',
    async () => {
      const cluster = await startCluster();
      return { redis: { cluster: { nodes: cluster.nodes } }, stop: () => cluster.stop() };
    },
  ],
];

interface Who {
  email: string;
  password: string;
}

describe.each(topologies)('revoke, then restore, on two gateways on %s', (_name, start) => {
  let topology: Topology;
  let upstream: Upstream;
  let fx: IdentityFixture;
  let gateways: TestGateway[];
  /** The CLI's view of the same store. */
  let loaded: LoadedConfig;

  beforeAll(async () => {
    [topology, upstream] = await Promise.all([start(), startEchoUpstream()]);
    fx = await startIdentityFixture({
      ...(topology.redis === undefined
        ? {}
        : { store: { redis: { ...topology.redis, keyPrefix: uniquePrefix() } } }),
      routes: [{ prefix: '/api', upstream: upstream.url }],
    });
    gateways = [fx.gw, await fx.startAnother()];
    loaded = {
      config: validateConfig({ ...fx.config, seed: undefined }, process.cwd(), 'cli'),
      files: [],
    };
  }, TIMEOUT);

  afterAll(async () => {
    await fx?.close();
    await upstream?.close();
    await topology?.stop();
  });

  /** Runs a CLI command in-process; returns what it printed. */
  const cli = (work: (loaded: LoadedConfig) => Promise<void>) => printedJson(() => work(loaded));

  const proxied = (gw: TestGateway, token: string) =>
    fetch(`${gw.url}/api/x`, { headers: { authorization: bearer(token) } });
  const tenantRecord = (gw: TestGateway, token: string) =>
    fetch(`${gw.url}/1/tenants/current`, { headers: { authorization: bearer(token) } });

  /** Accepted by the proxy and the api of every gateway (and so cached by each). */
  async function expectAccepted(token: string): Promise<void> {
    for (const gw of gateways) {
      expect((await proxied(gw, token)).status).toBe(200);
      expect((await tenantRecord(gw, token)).status).toBe(200);
    }
  }

  async function expectRefused(token: string): Promise<void> {
    for (const gw of gateways) {
      await expectError(await proxied(gw, token), 401, 'invalid_token');
      await expectError(await tenantRecord(gw, token), 401, 'invalid_token');
    }
  }

  /** A token from each gateway, each accepted by both. */
  async function tokensOf(who: Who, tenantId: string): Promise<string[]> {
    const tokens = [];
    for (const gw of gateways) tokens.push((await tokenFor(gw.url, who, tenantId)).access_token);
    for (const token of tokens) await expectAccepted(token);
    return tokens;
  }

  async function signUpAt(who: Who): Promise<{ user_id: string; tenant_id: string }> {
    const res = await signUp(gateways[1]?.url as string, who);
    expect(res.status).toBe(201);
    return (await res.json()) as { user_id: string; tenant_id: string };
  }

  async function setPassword(who: Who, password: string): Promise<void> {
    const res = await changePassword(gateways[0]?.url as string, who, password);
    expect(res.status).toBe(204);
  }

  it(
    'member remove, then member add: the old tokens stay refused; a new one is accepted',
    async () => {
      const old = await tokensOf(ALICE, 'acme');
      await cli((l) => memberChange(l, 'remove', 'acme', ALICE.email));
      for (const token of old) await expectRefused(token);

      await cli((l) => memberChange(l, 'add', 'acme', ALICE.email));
      for (const token of old) await expectRefused(token);
      await tokensOf(ALICE, 'acme');
    },
    TIMEOUT,
  );

  it(
    'removed and added back twice: only the newest membership’s tokens are accepted',
    async () => {
      const first = await tokensOf(ALICE, 'acme');
      await cli((l) => memberChange(l, 'remove', 'acme', ALICE.email));
      await cli((l) => memberChange(l, 'add', 'acme', ALICE.email));
      const second = await tokensOf(ALICE, 'acme');
      await cli((l) => memberChange(l, 'remove', 'acme', ALICE.email));
      await cli((l) => memberChange(l, 'add', 'acme', ALICE.email));
      for (const token of [...first, ...second]) await expectRefused(token);
      await tokensOf(ALICE, 'acme');
    },
    TIMEOUT,
  );

  it(
    'tenant remove, tenant add of the same id, member add: the old tenant’s tokens stay refused',
    async () => {
      const old = await tokensOf(BOB, 'globex');
      await cli((l) => tenantRemove(l, 'globex'));
      for (const token of old) await expectRefused(token);

      await cli((l) =>
        tenantAdd(l, 'globex', {
          name: 'Globex again',
          region: 'us-east-1',
          createdBy: BOB.email,
        }),
      );
      await cli((l) => memberChange(l, 'add', 'globex', BOB.email));
      for (const token of old) await expectRefused(token);
      await tokensOf(BOB, 'globex');
    },
    TIMEOUT,
  );

  it(
    'user disable, then enable: the old tokens stay refused',
    async () => {
      const carol = { email: 'carol@example.com', password: 'carol-password-1' };
      const { tenant_id: personal } = await signUpAt(carol);
      await cli((l) => memberChange(l, 'add', 'acme', carol.email));
      const old = [...(await tokensOf(carol, 'acme')), ...(await tokensOf(carol, personal))];

      await cli((l) => userSetDisabled(l, carol.email, true));
      for (const token of old) await expectRefused(token);
      await cli((l) => userSetDisabled(l, carol.email, false));
      for (const token of old) await expectRefused(token);
      await tokensOf(carol, 'acme');
    },
    TIMEOUT,
  );

  it(
    'a password change, then the old password set again: the old tokens stay refused',
    async () => {
      const dan = { email: 'dan@example.com', password: 'dan-password-1' };
      const { tenant_id: personal } = await signUpAt(dan);
      const old = await tokensOf(dan, personal);

      await setPassword(dan, 'dan-password-2');
      for (const token of old) await expectRefused(token);
      await setPassword({ ...dan, password: 'dan-password-2' }, dan.password);
      for (const token of old) await expectRefused(token);
      await tokensOf(dan, personal);
    },
    TIMEOUT,
  );

  it.each([
    ['signing up again (POST /1/users)', 'erin@example.com', 'api'],
    ['`user add`', 'frank@example.com', 'cli'],
  ] as const)(
    'user remove, then a user of the same e-mail by %s: the old user’s tokens stay refused',
    async (_how, email, how) => {
      const who = { email, password: 'same-password-1' };
      const { tenant_id: personal } = await signUpAt(who);
      await cli((l) => memberChange(l, 'add', 'acme', email));
      const old = [...(await tokensOf(who, 'acme')), ...(await tokensOf(who, personal))];

      await cli((l) => userRemove(l, email));
      for (const token of old) await expectRefused(token);

      if (how === 'api') await signUpAt(who);
      else {
        process.env['TG_TEST_SAME_PASSWORD'] = who.password;
        try {
          await cli((l) => userAdd(l, email, { passwordEnv: 'TG_TEST_SAME_PASSWORD' }));
        } finally {
          delete process.env['TG_TEST_SAME_PASSWORD'];
        }
      }
      await cli((l) => memberChange(l, 'add', 'acme', email));
      for (const token of old) await expectRefused(token);
      await tokensOf(who, 'acme');
    },
    TIMEOUT,
  );
});
