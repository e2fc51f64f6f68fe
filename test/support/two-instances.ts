/**
 * Two gateways of one identity fixture on a redis-server the suite runs
 * (`a`, `b`), and, when asked, a third whose Redis connections all go through
 * a relay 200 ms away (`slow`): the set-up of the suites about what one
 * instance changes and every instance honours at once. Call it inside a
 * describe block: the instances start in its `beforeAll` and close in its
 * `afterAll`, so the blocks of one file run one after the other on one
 * redis-server, each under a key prefix of its own.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { validateConfig, type LoadedConfig } from '../../src/config/index.js';
import { startGatewayBehind, waitUntilTrusted } from './gateway-behind.js';
import type { TestGateway } from './gateway.js';
import { startIdentityFixtureOn, type RedisIdentityFixture } from './identity-fixture.js';
import type { TestRedisServer } from './redis-server.js';
import { startTcpRelay, type TcpRelay } from './tcp-relay.js';
import { startEchoUpstream, type Upstream } from './upstream.js';

export interface TwoInstances {
  /** An echo upstream, for the routes `config` names. */
  echo: Upstream;
  fx: RedisIdentityFixture;
  a: TestGateway;
  b: TestGateway;
  /** A client of the redis-server: to read what the store holds and count commands. */
  redis: Redis;
  /** The store as the CLI sees it: its functions run in-process on the same store. */
  cli: LoadedConfig;
  /**
   * With `slowRelay`: the third gateway, its Redis 200 ms away through
   * `relay` (from the end of its start: it starts on the undelayed relay).
   */
  slow: TestGateway;
  relay: TcpRelay;
}

/**
 * `config(echo)` (the fixture's overrides, given the echo upstream's URL) is
 * read when the block starts, after the block's earlier `beforeAll` hooks
 * (its other upstreams). With `slowRelay`, `a` and `b` trust their session
 * caches before the slow one starts.
 */
export function useTwoInstances(
  server: () => TestRedisServer,
  config: (echo: string) => Record<string, unknown> = () => ({}),
  options: { slowRelay?: boolean } = {},
): TwoInstances {
  const t = {} as TwoInstances;
  beforeAll(async () => {
    t.echo = await startEchoUpstream();
    t.fx = await startIdentityFixtureOn(server(), config(t.echo.url));
    t.a = t.fx.gw;
    t.b = await t.fx.startAnother();
    t.redis = new Redis(server().url);
    t.cli = {
      config: validateConfig({ ...t.fx.config, seed: undefined }, process.cwd(), 'cli'),
      files: [],
    };
    if (options.slowRelay !== true) return;
    await waitUntilTrusted(t.a);
    await waitUntilTrusted(t.b);
    // Started near, then moved far: its start (connections, subscription,
    // lease) took ~3.5 s across the 400 ms round trip and is no suite's
    // subject; everything a test does with it crosses the slow link. A far
    // but healthy instance: its link's round trip, not a starved test
    // worker, is the subject, so its commands may take longer than the 1 s
    // default (as in strict-revocation, where a loaded machine saw a 503).
    t.relay = await startTcpRelay(server().port);
    t.slow = await startGatewayBehind(t.fx, t.relay, { redis: { commandTimeoutMs: 3000 } });
    t.relay.setDelay(200);
  }, 60_000);
  afterAll(async () => {
    await t.slow?.close();
    await t.relay?.close();
    t.redis?.disconnect();
    await t.fx?.close();
    await t.echo?.close();
  });
  return t;
}
