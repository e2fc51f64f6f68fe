/**
 * Issue 31: a WebSocket upgrade is recorded by the request recorder like any
 * request — one access-line shape (`"msg":"upgrade"` when the upstream's 101
 * reached the client, `"msg":"upgrade refused"` otherwise, with the fields
 * of every request's line) and one metric path (`tenant_gateway_requests_total`
 * and `tenant_gateway_websocket_upgrades_total` from the same record). Its
 * record is written when its exchange ends, not when the WebSocket closes,
 * and it leaves nothing in flight.
 */
import { expect, it } from 'vitest';
import WebSocket from 'ws';
import { fixtureSuite } from '../support/fixture-suite.js';
import { adminUrlOf, bearer } from '../support/gateway.js';
import { lineOf, lineWhere } from '../support/log-lines.js';
import { scrape, total } from '../support/prometheus-text.js';
import { refusedUpstream, startWebSocketUpstream } from '../support/upstream.js';

const s = fixtureSuite(
  { upstream: startWebSocketUpstream, down: refusedUpstream },
  ({ upstream, down }) => ({
    routes: [
      { prefix: '/live', upstream: upstream.url },
      { prefix: '/down', upstream: down.url },
    ],
  }),
  { logged: true, token: true },
);

const counted = async (labels: Record<string, string>) => {
  const samples = await scrape(adminUrlOf(s.gw));
  return {
    requests: total(samples, 'tenant_gateway_requests_total', labels),
    upgrades: total(samples, 'tenant_gateway_websocket_upgrades_total', {
      route: labels.route as string,
      outcome: labels.outcome as string,
    }),
    inFlight: total(samples, 'tenant_gateway_requests_in_flight'),
  };
};

it('an accepted upgrade: one "upgrade" line with status 101 once the 101 went out, counted once', async () => {
  const labels = { route: '/live', method: 'GET', code: '101', outcome: 'accepted' };
  const before = await counted(labels);
  const socket = new WebSocket(`${s.gw.url.replace(/^http:/, 'ws:')}/live/x`, {
    headers: { authorization: bearer(s.token), 'user-agent': 'upgrade-record-test' },
  });
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  // Written while the WebSocket is still open (the upstream's 101 carries no request id: found by agent).
  const line = await lineWhere(
    s.lines,
    (l) => l.msg === 'upgrade' && l.userAgent === 'upgrade-record-test',
  );
  const requestId = line?.requestId;
  expect(line).toMatchObject({
    method: 'GET',
    path: '/live/x',
    route: '/live',
    status: 101,
    outcome: 'accepted',
    tenantId: 'acme',
    userAgent: 'upgrade-record-test',
  });
  expect(line).not.toHaveProperty('reason');
  expect(typeof line?.durationMs).toBe('number');
  expect(await counted(labels)).toEqual({
    requests: before.requests + 1,
    upgrades: before.upgrades + 1,
    inFlight: 0,
  });
  socket.close();
  await new Promise((resolve) => socket.once('close', resolve));
  // Closing the WebSocket writes no second record.
  expect(s.lines.filter((l) => l.requestId === requestId)).toHaveLength(1);
});

it('an upstream that refuses the connection: one "upgrade refused" line, 502, failed', async () => {
  const labels = { route: '/down', code: '502', outcome: 'failed' };
  const before = await counted(labels);
  const socket = new WebSocket(`${s.gw.url.replace(/^http:/, 'ws:')}/down/x`, {
    headers: { authorization: bearer(s.token) },
  });
  const requestId = await new Promise<string | undefined>((resolve) => {
    socket.once('unexpected-response', (_req, res) => {
      expect(res.statusCode).toBe(502);
      resolve(res.headers['x-request-id'] as string | undefined);
    });
    socket.once('error', () => {});
  });
  const line = await lineOf(s.lines, requestId, 'upgrade refused');
  expect(line).toMatchObject({ route: '/down', status: 502, outcome: 'failed', tenantId: 'acme' });
  expect(await counted(labels)).toEqual({
    requests: before.requests + 1,
    upgrades: before.upgrades + 1,
    inFlight: 0,
  });
});
