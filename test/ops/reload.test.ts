/**
 * Issue 5, config reload, against the built process: SIGHUP (and, when
 * `admin.configReload` is on, `POST /config/reload`) re-reads the config file;
 * routes and tenant rules change without a restart and without dropping
 * connections; an invalid file is refused, logged with the key path of the
 * problem, and the old config keeps serving.
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../support/gateway.js';
import {
  OPERATOR,
  SEED_YAML,
  TENANT,
  startGatewayProcess,
  stopGatewayProcesses,
  signingKeyFile,
} from '../support/gateway-process.js';
import { tokenFor } from '../support/identity-fixture.js';
import { scrape, total } from '../support/prometheus-text.js';
import { startEchoUpstream, type CountingUpstream } from '../support/upstream.js';

let orders: CountingUpstream;
let invoices: CountingUpstream;
beforeAll(async () => {
  [orders, invoices] = await Promise.all([startEchoUpstream(), startEchoUpstream()]);
});
afterEach(() => stopGatewayProcesses());
afterAll(async () => {
  await orders?.close();
  await invoices?.close();
});

/**
 * A config with `admin` and `routes` as given (YAML lines), everything else
 * fixed: the embedded memory store, which a reload keeps (the store is not
 * the subject).
 */
function configText(parts: { admin?: string; routes: string[] }): string {
  return `
listen: { host: 127.0.0.1, port: 0 }
${parts.admin === undefined ? '' : `admin: ${parts.admin}`}
seed: ./seed.yaml
tokens: { keys: ./keys, ttlSeconds: 600 }
passwords: { bcryptCost: 4 }
routes:
${parts.routes.map((r) => `  - ${r}`).join('\n')}
`;
}

const ORDERS = () => `{ prefix: /orders, upstream: "${orders.url}" }`;
const ORDERS_BY_HEADER = () =>
  `{ prefix: /orders, upstream: "${orders.url}", tenant: { header: X-Org } }`;
const INVOICES = () => `{ prefix: /invoices, upstream: "${invoices.url}" }`;
const BROKEN = '{ prefix: /never, upstream: "not-a-url" }';

/** Starts a gateway on `routes`; returns it, a token, and a config writer. */
async function startGateway(parts: { admin?: string; routes: string[] }) {
  const gw = await startGatewayProcess(configText(parts), {
    files: { 'seed.yaml': SEED_YAML, ...signingKeyFile() },
  });
  const token = (await tokenFor(gw.url, OPERATOR, TENANT)).access_token;
  const rewrite = (next: { admin?: string; routes: string[] }) =>
    gw.rewriteConfig(configText(next));
  return { gw, token, rewrite };
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
  /** The client port of the connection that carried the request. */
  localPort: number | undefined;
}

/** A GET through `agent` (a fresh connection when none is given). */
function get(
  url: string,
  headers: Record<string, string>,
  agent: Agent | false = false,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers }, (res) => {
      const localPort = res.socket.localPort;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: JSON.parse(text) as Record<string, unknown>,
          localPort,
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function postReload(adminUrl: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${adminUrl}/config/reload`, { method: 'POST' });
  return { status: res.status, body: await res.json() };
}

describe('SIGHUP', () => {
  it('adds a route and changes a tenant rule live, on a keep-alive connection that stays open', async () => {
    const { gw, token, rewrite } = await startGateway({ routes: [ORDERS()] });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const auth = { authorization: bearer(token) };
      const before = await get(`${gw.url}/orders/1`, { ...auth, 'x-org': 'globex' }, agent);
      expect(before.status).toBe(200); // no tenant rule yet: X-Org means nothing
      expect((await get(`${gw.url}/invoices/7`, auth, agent)).body).toMatchObject({
        error: 'not_found',
      });

      rewrite({ routes: [ORDERS_BY_HEADER(), INVOICES()] });
      const outcome = await gw.sighup();
      expect(outcome.msg).toBe('config reloaded');

      const added = await get(`${gw.url}/invoices/7`, auth, agent);
      expect(added.status).toBe(200);
      expect(added.body).toMatchObject({ method: 'GET', url: '/invoices/7' });
      expect(invoices.requests.at(-1)?.headers['x-tenant-id']).toBe(TENANT);
      const refused = await get(`${gw.url}/orders/2`, { ...auth, 'x-org': 'globex' }, agent);
      expect(refused).toMatchObject({ status: 403, body: { error: 'tenant_mismatch' } });
      const matching = await get(`${gw.url}/orders/3`, { ...auth, 'x-org': TENANT }, agent);
      expect(matching.status).toBe(200);

      // One connection carried every request, before and after the reload.
      expect(before.localPort).toBeTypeOf('number');
      for (const answer of [added, refused, matching])
        expect(answer.localPort).toBe(before.localPort);
    } finally {
      agent.destroy();
    }
  });

  it('refuses a broken config, logs the key path of the problem, and keeps serving the old one', async () => {
    const admin = '{ host: 127.0.0.1, port: 0 }'; // where the reloads are counted
    const { gw, token, rewrite } = await startGateway({ admin, routes: [ORDERS()] });
    const auth = { authorization: bearer(token) };

    rewrite({ admin, routes: [INVOICES(), BROKEN] });
    const outcome = await gw.sighup();
    expect(outcome.msg).toBe('config reload refused: the old config keeps serving');
    expect(outcome.level).toBe(50); // pino's error
    expect(JSON.stringify(outcome['err'])).toContain('routes[1].upstream: must be an http(s) URL');

    expect((await get(`${gw.url}/orders/1`, auth)).status).toBe(200);
    // Nothing of the refused file was applied, not even its valid route.
    expect(await get(`${gw.url}/invoices/1`, auth)).toMatchObject({
      status: 404,
      body: { error: 'not_found' },
    });

    // A fixed file is taken on the next SIGHUP.
    rewrite({ admin, routes: [ORDERS(), INVOICES()] });
    const fixedAt = Math.floor(Date.now() / 1000);
    expect((await gw.sighup()).msg).toBe('config reloaded');
    expect((await get(`${gw.url}/invoices/1`, auth)).status).toBe(200);

    // Both counted, for the alert on a failed reload (issue 20).
    if (gw.adminUrl === undefined) throw new Error(`no admin address logged:\n${gw.output()}`);
    const samples = await scrape(gw.adminUrl);
    expect(total(samples, 'tenant_gateway_config_reloads_total', { result: 'failure' })).toBe(1);
    expect(total(samples, 'tenant_gateway_config_reloads_total', { result: 'success' })).toBe(1);
    expect(
      total(samples, 'tenant_gateway_config_last_reload_success_timestamp_seconds'),
    ).toBeGreaterThanOrEqual(fixedAt);
  });

  it('reports the keys it cannot apply live (tokens, listen) and keeps their old values', async () => {
    const { gw, rewrite } = await startGateway({ routes: [ORDERS()] });
    const ttlOf = async () => (await tokenFor(gw.url, OPERATOR, TENANT))['expires_in'];
    expect(await ttlOf()).toBe(600);

    // A new route, and a token lifetime and a listener port the process cannot change.
    rewrite({ routes: [ORDERS(), INVOICES()] });
    gw.rewriteConfig(
      readFileSync(gw.configPath, 'utf8')
        .replace('ttlSeconds: 600', 'ttlSeconds: 900')
        .replace('listen: { host: 127.0.0.1, port: 0 }', 'listen: { host: 127.0.0.1, port: 1 }'),
    );

    const outcome = await gw.sighup();
    expect(outcome.msg).toBe('config reloaded; some keys need a restart');
    expect(outcome['needsRestart']).toEqual(['listen', 'tokens']);
    // What could change did (the route); what needs a restart did not (the token lifetime).
    const auth = { authorization: bearer((await tokenFor(gw.url, OPERATOR, TENANT)).access_token) };
    expect((await get(`${gw.url}/invoices/1`, auth)).status).toBe(200);
    expect(await ttlOf()).toBe(600);
  });
});

describe('POST /config/reload', () => {
  it('with admin.configReload on: 200 for a good file, 400 with the problems for a broken one', async () => {
    const admin = '{ host: 127.0.0.1, port: 0, configReload: true }';
    const { gw, token, rewrite } = await startGateway({ admin, routes: [ORDERS()] });
    if (gw.adminUrl === undefined) throw new Error(`no admin address logged:\n${gw.output()}`);
    const auth = { authorization: bearer(token) };

    rewrite({ admin, routes: [ORDERS(), INVOICES()] });
    expect(await postReload(gw.adminUrl)).toEqual({
      status: 200,
      body: { reloaded: true, needsRestart: [] },
    });
    expect((await get(`${gw.url}/invoices/2`, auth)).status).toBe(200);
    // A key the process cannot change is named in the answer, not only in the log.
    gw.rewriteConfig(
      readFileSync(gw.configPath, 'utf8').replace('ttlSeconds: 600', 'ttlSeconds: 900'),
    );
    expect(await postReload(gw.adminUrl)).toEqual({
      status: 200,
      body: { reloaded: true, needsRestart: ['tokens'] },
    });

    rewrite({ admin, routes: [ORDERS(), BROKEN] });
    const from = gw.logLines().length;
    const refused = await postReload(gw.adminUrl);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ reloaded: false });
    expect((refused.body as { problems: string[] }).problems).toContain(
      'routes[1].upstream: must be an http(s) URL',
    );
    // Refused over HTTP is logged as refused on SIGHUP: the operator's log tells either way.
    const logged = await gw.waitForLog((l) => /^config reload refused/.test(l.msg ?? ''), from);
    expect(JSON.stringify(logged['err'])).toContain('routes[1].upstream: must be an http(s) URL');
    // The config before the broken file keeps serving.
    expect((await get(`${gw.url}/invoices/3`, auth)).status).toBe(200);
    expect((await get(`${gw.url}/orders/3`, auth)).status).toBe(200);
    // The endpoint is on the admin listener only.
    expect(await get(`${gw.url}/config/reload`, auth)).toMatchObject({ status: 404 });
  });

  it('answers 404 when admin.configReload is off, and when there is no admin listener', async () => {
    const withAdmin = await startGateway({
      admin: '{ host: 127.0.0.1, port: 0 }',
      routes: [ORDERS()],
    });
    if (withAdmin.gw.adminUrl === undefined) throw new Error('no admin address logged');
    const withoutAdmin = await startGateway({ routes: [ORDERS()] });

    for (const base of [withAdmin.gw.adminUrl, withoutAdmin.gw.url]) {
      expect(await postReload(base)).toMatchObject({ status: 404, body: { error: 'not_found' } });
    }
    // And nothing was reloaded behind the 404.
    withoutAdmin.rewrite({ routes: [ORDERS(), INVOICES()] });
    await postReload(withoutAdmin.gw.url);
    const auth = { authorization: bearer(withoutAdmin.token) };
    expect((await get(`${withoutAdmin.gw.url}/invoices/1`, auth)).status).toBe(404);
  });
});
