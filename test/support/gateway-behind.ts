/**
 * A gateway of an identity fixture whose Redis connections all go through a
 * relay (`tcp-relay.ts`: a slow or cut link), started and waited for until
 * it trusts its session cache — before that, every request reads the store.
 */
import { adminUrlOf, startTestGateway, type TestGateway } from './gateway.js';
import type { RedisIdentityFixture } from './identity-fixture.js';
import { scrape, total } from './prometheus-text.js';
import type { TcpRelay } from './tcp-relay.js';

/** `config` is merged over the fixture's; `redis` over its `store.redis`. */
export async function startGatewayBehind(
  fx: RedisIdentityFixture,
  relay: TcpRelay,
  overrides: { config?: Record<string, unknown>; redis?: Record<string, unknown> } = {},
): Promise<TestGateway> {
  const { seed: _seed, store, ...rest } = fx.config as { seed?: string; store: { redis: object } };
  const gw = await startTestGateway({
    ...rest,
    ...overrides.config,
    store: { redis: { ...store.redis, ...overrides.redis, url: relay.url } },
  });
  await waitUntilTrusted(gw);
  return gw;
}

/** Until the gateway trusts its session cache: events live and, in lease mode, a lease held. */
export async function waitUntilTrusted(gw: TestGateway): Promise<void> {
  const adminUrl = adminUrlOf(gw);
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (total(await scrape(adminUrl), 'tenant_gateway_session_events_live') === 1) return;
    if (Date.now() > deadline) throw new Error(`${gw.url} never trusted its session cache`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
