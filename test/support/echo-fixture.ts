/**
 * The memory identity fixture with an echo upstream behind its routes, for a
 * suite or a describe block whose subject is the identity API or the proxy:
 * started in the block's `beforeAll` (before the hooks registered after the
 * call), closed in its `afterAll`.
 */
import { afterAll, beforeAll } from 'vitest';
import { startMemoryIdentityFixture, type IdentityFixture } from './identity-fixture.js';
import { startEchoUpstream, type CountingUpstream } from './upstream.js';

export interface EchoFixture {
  fx: IdentityFixture;
  upstream: CountingUpstream;
}

/** `config(upstream)`: the fixture's overrides, given the echo upstream's URL. */
export function useEchoFixture(config: (upstream: string) => Record<string, unknown>): EchoFixture {
  const started = {} as EchoFixture;
  beforeAll(async () => {
    started.upstream = await startEchoUpstream();
    started.fx = await startMemoryIdentityFixture(config(started.upstream.url));
  }, 60_000);
  afterAll(async () => {
    await started.fx?.close();
    await started.upstream?.close();
  });
  return started;
}
