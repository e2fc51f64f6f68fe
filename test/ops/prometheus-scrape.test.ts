/**
 * Issue 20: a real Prometheus (Debian's package) scrapes a gateway process
 * under real traffic — accepted, refused, 502 from a refused upstream,
 * forward-auth, failed logins, a logout, a refused reload and a good one —
 * and every query of the shipped Grafana dashboard and every alert
 * expression runs through Prometheus's query API: each must parse, each
 * dashboard query must return a series with a number in it (rates, ratios,
 * histogram_quantile), and each alert's measure (its expression without the
 * threshold) must find the real series, so a quiet alert is quiet because
 * its threshold is not crossed, not because it names nothing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { basic, bearer } from '../support/gateway.js';
import {
  OPERATOR,
  SEED_YAML,
  startGatewayProcess,
  stopGatewayProcesses,
  TENANT,
  type GatewayProcess,
} from '../support/gateway-process.js';
import { startPrometheus, type QuerySample, type TestPrometheus } from '../support/prometheus.js';
import {
  refusedUpstream,
  startEchoUpstream,
  type CountingUpstream,
  type Upstream,
} from '../support/upstream.js';

const ROOT = join(import.meta.dirname, '../..');
const JOB = 'tenant-gateway';

interface Panel {
  title: string;
  type: string;
  targets?: { expr: string }[];
}
const dashboard = JSON.parse(
  readFileSync(join(ROOT, 'deploy/grafana/tenant-gateway.json'), 'utf8'),
) as { panels: Panel[] };
const queries = dashboard.panels.flatMap((p) =>
  (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })),
);
const alerts = (
  parse(readFileSync(join(ROOT, 'deploy/prometheus/tenant-gateway-alerts.yaml'), 'utf8')) as {
    groups: { rules: { alert: string; expr: string }[] }[];
  }
).groups.flatMap((g) => g.rules);

/** Grafana's variables as a dashboard user with every route selected would have them. */
const asGrafanaSends = (expr: string) =>
  expr.replaceAll('$__rate_interval', '30s').replaceAll('$route', '.*');

let echo: CountingUpstream;
let refused: Upstream;
let gw: GatewayProcess;
let prometheus: TestPrometheus;

async function traffic(rounds: number): Promise<void> {
  const token = (await (
    await fetch(`${gw.url}/1/token?tenant_id=${TENANT}`, {
      headers: { authorization: basic(OPERATOR.email, OPERATOR.password) },
    })
  ).json()) as { access_token: string };
  const auth = { authorization: bearer(token.access_token) };
  for (let i = 0; i < rounds; i++) {
    const answers = await Promise.all([
      fetch(`${gw.url}/echo/items`, { headers: auth }),
      fetch(`${gw.url}/echo/items`, { method: 'POST', headers: auth, body: '{"n":1}' }),
      fetch(`${gw.url}/refused/items`, { headers: auth }),
      fetch(`${gw.url}/echo/items`),
      fetch(`${gw.url}/auth/verify`, { headers: auth }),
      fetch(`${gw.url}/1/token?tenant_id=${TENANT}`, {
        headers: { authorization: basic(OPERATOR.email, 'wrong-password-1') },
      }),
    ]);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 502, 401, 200, 401]);
    await Promise.all(answers.map((r) => r.arrayBuffer()));
    await delay(300);
  }
  expect((await fetch(`${gw.url}/1/token`, { method: 'DELETE', headers: auth })).status).toBe(204);
}

beforeAll(async () => {
  [echo, refused] = await Promise.all([startEchoUpstream(), refusedUpstream()]);
  const config = `
listen: { host: 127.0.0.1, port: 0 }
admin: { host: 127.0.0.1, port: 0 }
seed: ./seed.yaml
passwords: { bcryptCost: 4 }
limits: { login: { perEmail: 1000, perIp: 1000 } }
routes:
  - { prefix: /echo, upstream: "${echo.url}" }
  - { prefix: /refused, upstream: "${refused.url}" }
`;
  gw = await startGatewayProcess(config, { files: { 'seed.yaml': SEED_YAML } });
  prometheus = await startPrometheus(JOB, [new URL(gw.adminUrl as string).host]);
  await prometheus.scrapes(1);
  await traffic(12);
  // A refused reload, then the fixed file: the reload alert must see the
  // first refusal of the process's life (a counter that starts at 1 shows
  // Prometheus no increase).
  gw.rewriteConfig(`${config}  - { prefix: /broken, upstream: not-a-url }\n`);
  expect((await gw.sighup()).msg).toMatch(/^config reload refused/);
  await prometheus.scrapes(1);
  gw.rewriteConfig(config);
  expect((await gw.sighup()).msg).toMatch(/^config reloaded/);
  // Every counter moved across several scrapes: a 30 s rate has its two points.
  await prometheus.scrapes(2);
}, 90_000);

afterAll(async () => {
  await prometheus?.stop();
  await stopGatewayProcesses();
  await Promise.all([echo?.close(), refused?.close()]);
});

/** The values of a query's series, keyed by the labels named. */
async function byLabel(expr: string, label: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const s of await prometheus.query(expr)) out[s.metric[label] ?? ''] = s.value;
  return out;
}

describe('every query of deploy/grafana/tenant-gateway.json', () => {
  it.each(queries)('$panel: $expr', async ({ expr }) => {
    const samples: QuerySample[] = await prometheus.query(asGrafanaSends(expr));
    expect(samples.length).toBeGreaterThan(0);
    expect(samples.some((s) => Number.isFinite(s.value))).toBe(true);
  });
});

describe('the dashboard’s numbers are the traffic’s', () => {
  it('requests by outcome: accepted, refused and failed all moved', async () => {
    const rates = await byLabel(
      'sum by (outcome) (rate(tenant_gateway_requests_total[30s]))',
      'outcome',
    );
    expect(rates.accepted).toBeGreaterThan(0);
    expect(rates.refused).toBeGreaterThan(0);
    expect(rates.failed).toBeGreaterThan(0);
  });

  it('refusals and failures by reason name the 401s and the 502s', async () => {
    const totals = await byLabel(
      'sum by (reason) (tenant_gateway_requests_total{outcome!="accepted"})',
      'reason',
    );
    expect(totals.bad_gateway).toBe(12);
    expect(totals.invalid_token).toBe(12);
    expect(totals.invalid_credentials).toBe(12);
    // The 401s came with no token at all; every other reason is exported, at 0.
    const why = await byLabel('sum by (reason) (tenant_gateway_token_refusals_total)', 'reason');
    expect(why.missing).toBe(12);
    expect(Object.values(why).reduce((a, b) => a + b, 0)).toBe(12);
    expect(Object.keys(why).length).toBeGreaterThan(10);
  });

  it('the gateway-made 5xx ratio is the 502s over every request', async () => {
    const [failed502] = await prometheus.query(
      'sum(tenant_gateway_requests_total{outcome="failed",code=~"5.."})',
    );
    const [all] = await prometheus.query('sum(tenant_gateway_requests_total)');
    expect(failed502?.value).toBe(12);
    expect(all?.value).toBeGreaterThan(12 * 6);
  });

  it('forward-auth latency and upstream latency (502s included) are histograms with data', async () => {
    const [p99] = await prometheus.query(
      'histogram_quantile(0.99, sum by (le) (rate(tenant_gateway_request_duration_seconds_bucket{route="forward-auth"}[30s])))',
    );
    expect(p99?.value).toBeGreaterThan(0);
    const upstream = await byLabel(
      'sum by (outcome) (tenant_gateway_upstream_duration_seconds_count{route="/refused"})',
      'outcome',
    );
    expect(upstream.failed).toBe(12);
  });

  it('logins, revocation, reload, store and build info', async () => {
    const [issued] = await prometheus.query('sum(tenant_gateway_tokens_issued_total)');
    expect(issued?.value).toBe(1);
    const events = await prometheus.query('sum(tenant_gateway_session_events_total)');
    expect(events[0]?.value).toBeGreaterThan(0);
    const reloads = await byLabel(
      'sum by (result) (tenant_gateway_config_reloads_total)',
      'result',
    );
    expect(reloads).toEqual({ success: 1, failure: 1 });
    expect((await prometheus.query('min(tenant_gateway_store_up)'))[0]?.value).toBe(1);
    const [build] = await prometheus.query('tenant_gateway_build_info');
    expect(build?.metric.version).toMatch(/^\d+\.\d+\.\d+/);
  });
});

/**
 * An alert's measure: its expression without the final comparison to a
 * constant; for `absent(S)`, how many series S has.
 */
function measureOf(expr: string): string {
  const absent = /^absent\((.*)\)$/s.exec(expr.trim());
  if (absent !== null) return `count(${absent[1]})`;
  const measure = expr.trim().replace(/\s*(==|!=|>=|<=|>|<)\s*[\d.*\s]+$/, '');
  if (measure === expr.trim()) throw new Error(`no threshold at the end of: ${expr}`);
  return measure;
}

/** What each alert measures on this traffic, and whether it fires. */
const expected: Record<string, { measure: (v: number) => boolean; fires: boolean }> = {
  TenantGatewayDown: { measure: (up) => up === 1, fires: false },
  // One gateway is scraped.
  TenantGatewayAbsent: { measure: (targets) => targets === 1, fires: false },
  // A 502 in every six requests: far above 5 %.
  TenantGatewayGatewayErrors: { measure: (ratio) => ratio > 0.05, fires: true },
  TenantGatewayStoreUnreachable: { measure: (up) => up === 1, fires: false },
  // 12 refused logins in a 5 m window: above 0, far below 1/s.
  TenantGatewayLoginFailureSpike: { measure: (rate) => rate > 0 && rate < 1, fires: false },
  // No refresh tokens in this traffic: the reused series is exported at 0.
  TenantGatewayRefreshTokenReused: { measure: (reuses) => reuses === 0, fires: false },
  // The test's key was made at start: seconds old.
  TenantGatewaySigningKeyOld: { measure: (age) => age >= 0 && age < 3600, fires: false },
  // The refused reload above.
  TenantGatewayConfigReloadFailed: { measure: (n) => n > 0, fires: true },
  // The process's RSS over the memory it may use, its heap over V8's limit:
  // both series found and joined, a small share of either limit.
  TenantGatewayMemoryNearLimit: { measure: (share) => share > 0 && share < 0.85, fires: false },
  TenantGatewayHeapNearLimit: { measure: (share) => share > 0 && share < 0.85, fires: false },
};

describe('every alert expression of deploy/prometheus/tenant-gateway-alerts.yaml', () => {
  it('has its expectation here', () => {
    expect(alerts.map((a) => a.alert).sort()).toEqual(Object.keys(expected).sort());
  });

  it.each(alerts)('$alert measures the real series', async ({ alert, expr }) => {
    const samples = await prometheus.query(measureOf(expr));
    expect(samples).toHaveLength(1);
    const value = samples[0]?.value as number;
    expect(expected[alert]?.measure(value), `${alert}: ${value}`).toBe(true);
  });

  it.each(alerts)('$alert fires only where it should', async ({ alert, expr }) => {
    const firing = await prometheus.query(expr);
    expect(firing).toHaveLength(expected[alert]?.fires ? 1 : 0);
  });
});
