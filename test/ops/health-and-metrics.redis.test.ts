/**
 * The operations endpoints against a running gateway over real sockets:
 * `/healthz`, `/readyz` following the store, `/metrics` parsed as Prometheus
 * text with its counters moving; on a separate admin listener.
 */
import type { AddressInfo } from 'node:net';
import { totalmem } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { describe, expect, it } from 'vitest';
import { memoryLimitBytes } from '../../src/ops/memory-limits.js';
import { fixtureSuite } from '../support/fixture-suite.js';
import { adminUrlOf, basic, bearer, startTestGateway } from '../support/gateway.js';
import { ALICE, startIdentityFixture, tokenFor } from '../support/identity-fixture.js';
import { startEchoUpstream } from '../support/upstream.js';

const s = fixtureSuite(
  { upstream: startEchoUpstream },
  ({ upstream }) => ({
    admin: { host: '127.0.0.1', port: 0 },
    routes: [{ prefix: '/api', upstream: upstream.url, tenant: { header: 'X-Tenant-Id' } }],
  }),
  {
    start: (config) => startIdentityFixture(config),
  },
);
const adminUrl = () => adminUrlOf(s.gw);

async function metrics(): Promise<ReturnType<typeof parsePrometheusTextFormat>> {
  const res = await fetch(`${adminUrl()}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusTextFormat(await res.text());
}

function sample(
  families: ReturnType<typeof parsePrometheusTextFormat>,
  name: string,
  labels: Record<string, string> = {},
): number {
  const family = families.find((f) => f.name === name);
  if (family === undefined) return 0;
  return family.metrics
    .filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
    .reduce((sum, m) => sum + Number(m.value ?? m.count ?? m.buckets?.['+Inf'] ?? 0), 0);
}

describe('health', () => {
  it('/healthz answers while the process lives', async () => {
    const res = await fetch(`${adminUrl()}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('the ops paths are not on the main listener when an admin listener exists', async () => {
    expect((await fetch(`${s.fx.gw.url}/healthz`)).status).toBe(404);
    expect((await fetch(`${adminUrl()}/1/token`)).status).toBe(404);
  });
});

describe('metrics', () => {
  it('counts accepted and refused requests by route, reason and principal, upstream latency, tokens, logins', async () => {
    const { access_token } = await tokenFor(s.fx.gw.url, ALICE, 'acme');
    const before = await metrics();
    const auth = { authorization: bearer(access_token), 'x-tenant-id': 'acme' };
    for (let i = 0; i < 3; i++)
      expect((await fetch(`${s.fx.gw.url}/api/x`, { headers: auth })).status).toBe(200);
    expect(
      (await fetch(`${s.fx.gw.url}/api/x`, { headers: { ...auth, 'x-tenant-id': 'globex' } }))
        .status,
    ).toBe(403);
    expect((await fetch(`${s.fx.gw.url}/api/x`)).status).toBe(401);
    expect(
      (
        await fetch(`${s.fx.gw.url}/1/token?tenant_id=acme`, {
          headers: { authorization: basic(ALICE.email, 'nope-nope-1') },
        })
      ).status,
    ).toBe(401);
    await tokenFor(s.fx.gw.url, ALICE, 'acme');
    const after = await metrics();

    const delta = (name: string, labels: Record<string, string> = {}) =>
      sample(after, name, labels) - sample(before, name, labels);
    expect(
      delta('tenant_gateway_requests_total', {
        route: '/api',
        method: 'GET',
        code: '200',
        outcome: 'accepted',
        principal: 'user',
      }),
    ).toBe(3);
    expect(
      delta('tenant_gateway_requests_total', {
        route: '/api',
        outcome: 'refused',
        reason: 'tenant_mismatch',
        principal: 'user',
      }),
    ).toBe(1);
    expect(
      delta('tenant_gateway_requests_total', {
        route: '/api',
        outcome: 'refused',
        reason: 'invalid_token',
        principal: 'none',
      }),
    ).toBe(1);
    expect(
      delta('tenant_gateway_requests_total', {
        route: 'api',
        outcome: 'refused',
        reason: 'invalid_credentials',
        principal: 'none',
      }),
    ).toBe(1);
    expect(delta('tenant_gateway_tokens_issued_total')).toBe(1);
    expect(delta('tenant_gateway_login_failures_total', { reason: 'invalid_credentials' })).toBe(1);
    // parse-prometheus-text-format drops a histogram's labels: only /api is proxied here.
    expect(delta('tenant_gateway_upstream_duration_seconds')).toBe(3);
    expect(
      delta('tenant_gateway_cache_lookups_total', { cache: 'verified_tokens', result: 'hit' }),
    ).toBeGreaterThanOrEqual(3);
    expect(sample(after, 'tenant_gateway_session_events_live')).toBe(1);
    expect(after.find((f) => f.name === 'nodejs_eventloop_lag_seconds')).toBeDefined();
  });

  it('a scrape with no traffic since the last one reports the same request totals', async () => {
    const { access_token } = await tokenFor(s.fx.gw.url, ALICE, 'acme');
    const auth = { authorization: bearer(access_token), 'x-tenant-id': 'acme' };
    expect((await fetch(`${s.fx.gw.url}/api/y`, { headers: auth })).status).toBe(200);
    const labels = { route: '/api', code: '200', outcome: 'accepted' };
    const first = sample(await metrics(), 'tenant_gateway_requests_total', labels);
    const second = sample(await metrics(), 'tenant_gateway_requests_total', labels);
    expect(first).toBeGreaterThanOrEqual(1);
    expect(second).toBe(first);
    expect((await fetch(`${s.fx.gw.url}/api/y`, { headers: auth })).status).toBe(200);
    expect(sample(await metrics(), 'tenant_gateway_requests_total', labels)).toBe(first + 1);
  });

  it('exports the memory the process may use and V8’s heap limit, for the memory alerts to compare with', async () => {
    // Issue 30: an RSS alert needs the container's limit, a heap alert V8's.
    const families = await metrics();
    const limit = sample(families, 'tenant_gateway_memory_limit_bytes');
    expect(limit).toBe(memoryLimitBytes());
    expect(limit).toBeLessThanOrEqual(totalmem());
    expect(limit).toBeGreaterThan(sample(families, 'process_resident_memory_bytes'));
    const heap = sample(families, 'tenant_gateway_heap_limit_bytes');
    expect(heap).toBe(getHeapStatistics().heap_size_limit);
    expect(heap).toBeGreaterThan(sample(families, 'nodejs_heap_size_used_bytes'));
  });
});

describe('memoryLimitBytes', () => {
  it('is the cgroup’s limit when there is one, else the machine’s RAM', () => {
    const ram = 24 * 2 ** 30;
    expect(memoryLimitBytes(256 * 2 ** 20, ram)).toBe(256 * 2 ** 20);
    // Unconstrained: Node 20 reports the cgroup's "max", Node 24 may report 0.
    expect(memoryLimitBytes(2 ** 64, ram)).toBe(ram);
    expect(memoryLimitBytes(0, ram)).toBe(ram);
    // A limit above the RAM limits nothing.
    expect(memoryLimitBytes(32 * 2 ** 30, ram)).toBe(ram);
  });
});

// Last: these restart Redis, which keeps nothing (the seed data is gone afterwards).
describe('store outages', () => {
  it('/readyz stays ready while Redis is down (it says so), unless readiness.requireStore', async () => {
    const strict = await startTestGateway({
      ...s.fx.config,
      admin: { host: '127.0.0.1', port: 0 },
      readiness: { requireStore: true },
    });
    const strictUrl = `http://127.0.0.1:${(strict.gateway.adminServer!.address() as AddressInfo).port}`;
    try {
      for (const url of [adminUrl(), strictUrl]) {
        const up = await fetch(`${url}/readyz`);
        expect(up.status).toBe(200);
        expect(await up.json()).toEqual({ status: 'ready', store: 'ok' });
      }
      await s.fx.redis.kill();
      const lenient = await fetch(`${adminUrl()}/readyz`);
      expect(lenient.status).toBe(200);
      expect(await lenient.json()).toEqual({ status: 'ready', store: 'unreachable' });
      const down = await fetch(`${strictUrl}/readyz`);
      expect(down.status).toBe(503);
      expect(await down.json()).toEqual({
        status: 'not ready',
        reasons: ['store unreachable'],
        store: 'unreachable',
      });
      await s.fx.redis.restart();
      let status = 0;
      for (let i = 0; i < 60 && status !== 200; i++) {
        await new Promise((r) => setTimeout(r, 100));
        status = (await fetch(`${strictUrl}/readyz`)).status;
      }
      expect(status).toBe(200);
    } finally {
      await strict.close();
    }
  });

  it('counts store errors while Redis is down', async () => {
    const before = sample(await metrics(), 'tenant_gateway_store_errors_total');
    await s.fx.redis.kill();
    try {
      const res = await fetch(`${s.fx.gw.url}/1/token?tenant_id=acme`, {
        headers: { authorization: basic(ALICE.email, ALICE.password) },
      });
      expect(res.status).toBe(503);
    } finally {
      await s.fx.redis.restart();
    }
    expect(sample(await metrics(), 'tenant_gateway_store_errors_total') - before).toBe(1);
  });
});
