/**
 * Issue 30, item 3: the operations endpoints (`/healthz`, `/readyz`,
 * `/metrics`) are never answered on the public listener unless a config asks
 * for it (`listen.opsEndpoints`): without `admin` they are served nowhere, so
 * an upstream's own `/healthz` or `/metrics` behind a route is what a client
 * reaches. With `admin` they are there, and only there.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { expectError } from '../support/expect-error.js';
import { startEchoUpstream, type CountingUpstream } from '../support/upstream.js';

const PROBES = ['/healthz', '/readyz', '/metrics'];

let upstream: CountingUpstream;
let gw: TestGateway | undefined;
beforeAll(async () => {
  upstream = await startEchoUpstream();
});
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});
afterAll(() => upstream?.close());

/** A public catch-all route to the echo upstream: whatever reaches it is echoed. */
const catchAll = () => ({ prefix: '/', upstream: upstream.url, auth: 'none' });

describe('without admin (the README config)', () => {
  it('the probe paths reach the route behind them: the upstream answers its own /healthz, /readyz, /metrics', async () => {
    gw = await startTestGateway({ routes: [catchAll()] });
    expect(gw.gateway.adminServer).toBeUndefined();
    for (const path of PROBES) {
      const res = await fetch(`${gw.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(((await res.json()) as { url: string }).url).toBe(path);
    }
    expect(upstream.requests.slice(-3).map((r) => r.url)).toEqual(PROBES);
  });

  it('with no route there, they are 404 like any unknown path', async () => {
    gw = await startTestGateway({});
    for (const path of [...PROBES, '/config/reload'])
      await expectError(await fetch(`${gw.url}${path}`), 404, 'not_found');
  });
});

describe('with admin', () => {
  it('answers them on the admin listener only; the public listener forwards them to the route', async () => {
    gw = await startTestGateway({ admin: {}, routes: [catchAll()] });
    const admin = gw.adminUrl as string;
    expect((await fetch(`${admin}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${admin}/readyz`)).json()).toMatchObject({ status: 'ready' });
    expect(await (await fetch(`${admin}/metrics`)).text()).toContain('tenant_gateway_build_info');
    for (const path of PROBES) {
      const res = await fetch(`${gw.url}${path}`);
      expect(((await res.json()) as { url: string }).url, path).toBe(path);
    }
  });
});

describe('listen.opsEndpoints: true (the explicit opt-in)', () => {
  it('answers the probe paths on the public listener, never /config/reload', async () => {
    gw = await startTestGateway({
      listen: { opsEndpoints: true },
      routes: [{ prefix: '/config', upstream: upstream.url, auth: 'none' }],
    });
    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    expect(await (await fetch(`${gw.url}/readyz`)).json()).toMatchObject({ status: 'ready' });
    expect(await (await fetch(`${gw.url}/metrics`)).text()).toContain('tenant_gateway_build_info');
    // The path stays the route's: the gateway's config is never reloaded from the public port.
    const reload = await fetch(`${gw.url}/config/reload`, { method: 'POST' });
    expect(reload.status).toBe(200);
    expect(((await reload.json()) as { url: string }).url).toBe('/config/reload');
  });
});
