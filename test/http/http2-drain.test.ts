/**
 * A graceful stop with HTTP/2 clients: their connection gets GOAWAY, the
 * stream in flight finishes within the drain, and no new one begins.
 */
import { afterAll, expect, it } from 'vitest';
import { startTestGateway } from '../support/gateway.js';
import { http2Request, http2Session } from '../support/http2-client.js';
import { startSlowUpstream, type CountingUpstream } from '../support/upstream.js';

let upstream: CountingUpstream | undefined;
afterAll(async () => {
  await upstream?.close();
});

it('sends GOAWAY at a drain and lets the stream in flight finish', async () => {
  upstream = await startSlowUpstream(800);
  const gw = await startTestGateway({
    listen: { http2: true },
    routes: [{ prefix: '/slow', upstream: upstream.url, auth: 'none' }],
  });
  const session = await http2Session(gw.url);
  const goaway = new Promise<number>((resolve) => session.once('goaway', (code) => resolve(code)));
  const inFlight = http2Request(session, '/slow/one');
  await new Promise((resolve) => setTimeout(resolve, 200));
  const closed = gw.gateway.close(5000);
  expect(await goaway).toBe(0);
  const answer = await inFlight;
  expect(answer.status).toBe(200);
  expect(answer.body).toBe('slow');
  await closed;
  expect(session.destroyed || session.closed).toBe(true);
});
