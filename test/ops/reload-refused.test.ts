/**
 * A reload whose new settings cannot be built changes nothing: the new route
 * table, header policy and trust check are all built before any is applied
 * (src/gateway/reload.ts), so a route whose CA file cannot be read leaves the
 * routes, the trusted proxies (the access log's client address, the
 * forwarded X-Forwarded-For) as they were; the same config without that
 * route then applies whole.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/index.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { lineSink } from '../support/log-sink.js';
import { startEchoUpstream, type CountingUpstream } from '../support/upstream.js';

let echo: CountingUpstream;
let gw: TestGateway;
const sink = lineSink();

const base = () => ({
  listen: { host: '127.0.0.1', port: 0 },
  routes: [{ prefix: '/a', upstream: echo.url, auth: 'none' }],
});

beforeAll(async () => {
  echo = await startEchoUpstream();
  gw = await startTestGateway(base(), { logTo: sink.stream });
});
afterAll(async () => {
  await gw?.close();
  await echo?.close();
});

/** What a request from 127.0.0.1 claiming to come from 203.0.113.9 shows: the forwarded header, the logged client. */
async function seen() {
  const res = await fetch(`${gw.url}/a`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
  const echoed = (await res.json()) as { headers: Record<string, string | undefined> };
  await new Promise((resolve) => setTimeout(resolve, 50)); // the access line follows the response
  const logged = sink.lines.filter((l) => l['path'] === '/a').at(-1);
  return { forwarded: echoed.headers['x-forwarded-for'], clientIp: logged?.['clientIp'] };
}

it('a route whose CA file cannot be read: the reload throws and nothing changes; without it, all applies', async () => {
  const before = await seen();
  expect(before.clientIp).toBe('127.0.0.1');
  // Readable when the config is checked, gone when the reload reads it.
  const ca = join(mkdtempSync(join(tmpdir(), 'tg-reload-')), 'ca.pem');
  writeFileSync(ca, 'not read before the reload');
  const trusting = { ...base(), trustedProxies: ['127.0.0.0/8'] };
  const broken = {
    prefix: '/b',
    upstream: 'https://127.0.0.1:1',
    auth: 'none',
    tls: { ca },
  };
  const next = validateConfig(
    { ...trusting, routes: [...trusting.routes, broken], log: { level: 'silent' } },
    process.cwd(),
    'test',
  );
  rmSync(ca);
  await expect(gw.gateway.reload(next)).rejects.toThrow(/ca\.pem/);
  expect((await fetch(`${gw.url}/b`)).status).toBe(404);
  expect(await seen()).toEqual(before);

  await gw.gateway.reload(
    validateConfig({ ...trusting, log: { level: 'silent' } }, process.cwd(), 'test'),
  );
  const after = await seen();
  expect(after.clientIp).toBe('203.0.113.9');
  expect(after.forwarded?.startsWith('203.0.113.9, ')).toBe(true);
});
