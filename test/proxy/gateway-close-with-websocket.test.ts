import { afterAll, beforeAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import { bearer } from '../support/gateway.js';
import {
  ALICE,
  startMemoryIdentityFixture,
  tokenFor,
  type IdentityFixture,
} from '../support/identity-fixture.js';
import { startWebSocketUpstream, type WebSocketUpstream } from '../support/upstream.js';

let fx: IdentityFixture;
let upstream: WebSocketUpstream;
beforeAll(async () => {
  upstream = await startWebSocketUpstream();
  fx = await startMemoryIdentityFixture({ routes: [{ prefix: '/live', upstream: upstream.url }] });
});
afterAll(async () => {
  await fx.close();
  await upstream.close();
});

it('gateway.close() resolves while a proxied WebSocket is open', async () => {
  const other = await fx.startAnother();
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
