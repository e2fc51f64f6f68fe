import { expect, it } from 'vitest';
import WebSocket from 'ws';
import { fixtureSuite } from '../support/fixture-suite.js';
import { bearer } from '../support/gateway.js';
import { ALICE, tokenFor } from '../support/identity-fixture.js';
import { startWebSocketUpstream } from '../support/upstream.js';

const s = fixtureSuite({ upstream: startWebSocketUpstream }, ({ upstream }) => ({
  routes: [{ prefix: '/live', upstream: upstream.url }],
}));

it('gateway.close() resolves while a proxied WebSocket is open', async () => {
  const other = await s.fx.startAnother();
  const token = (await tokenFor(other.url, ALICE, 'acme')).access_token;
  const ws = new WebSocket(`${other.url.replace('http', 'ws')}/live/x`, {
    headers: { authorization: bearer(token) },
  });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const closing = other.close().then(() => 'closed');
  const outcome = await Promise.race([
    closing,
    new Promise((r) => setTimeout(() => r('still open after 5 s'), 5000)),
  ]);
  ws.terminate();
  expect(outcome).toBe('closed');
});
