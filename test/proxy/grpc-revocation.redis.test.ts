/**
 * Issue 47: a live gRPC stream ends with UNAUTHENTICATED when what admitted
 * it ends on another instance — the user's password changed, the user's
 * membership of the stream's tenant removed by a tenant admin (`DELETE
 * /1/tenants/{t}/members/{id}`). The stream runs through instance A, the
 * change is made through instance B, both on one Redis. (A revoked token:
 * websocket-revocation.redis.test.ts.)
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureSuite } from '../support/fixture-suite.js';
import { basic, type TestGateway } from '../support/gateway.js';
import { echoClient, startEchoUpstream, withToken, type EchoMsg } from '../support/grpc-echo.js';
import { ALICE, BOB, startIdentityFixture, tokenFor } from '../support/identity-fixture.js';
import { adminCall } from '../support/tenant-admin-calls.js';

const s = fixtureSuite(
  { grpcEcho: startEchoUpstream },
  ({ grpcEcho }) => ({
    listen: { http2: true },
    routes: [{ prefix: '/test.echo.Echo', upstream: grpcEcho.url, protocol: 'grpc' }],
  }),
  { start: (config) => startIdentityFixture(config) },
);
let a: TestGateway;
let b: TestGateway;
let client: ReturnType<typeof echoClient>;

beforeAll(async () => {
  a = s.fx.gw;
  b = await s.fx.startAnother();
  client = echoClient(new URL(a.url).host);
});
afterAll(() => client?.close());

/** A live bidi stream through A: `say` answers its echo, `ended` its status once it ends. */
async function liveStream(token: string) {
  const call = client.Bidi(withToken(token)) as grpc.ClientDuplexStream<EchoMsg, EchoMsg>;
  call.on('error', () => {});
  const status = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
  const say = (text: string) =>
    new Promise<string | undefined>((resolve) => {
      call.once('data', (m: EchoMsg) => resolve(m.text));
      call.write({ text });
    });
  expect(await say('before')).toBe('echo:before');
  /** The stream's status; rejects past 5 s (a bounded wait, not a duration). */
  const ended = () =>
    Promise.race([
      status,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('the stream is still open after 5 s')), 5000),
      ),
    ]);
  return { call, say, ended };
}

describe('a live gRPC stream through instance A ends with UNAUTHENTICATED', () => {
  it("when the user's password is changed on instance B", async () => {
    const email = 'grpc-wanda@example.com';
    const signUp = await fetch(`${a.url}/1/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'wanda-password-1' }),
    });
    expect(signUp.status).toBe(201);
    const tenantId = ((await signUp.json()) as { tenant_id: string }).tenant_id;
    const who = { email, password: 'wanda-password-1' };
    const stream = await liveStream((await tokenFor(a.url, who, tenantId)).access_token);

    const change = await fetch(`${b.url}/1/users/current/password`, {
      method: 'PUT',
      headers: { authorization: basic(email, who.password), 'content-type': 'application/json' },
      body: JSON.stringify({ password: 'wanda-password-2' }),
    });
    expect(change.status).toBe(204);

    const ended = await stream.ended();
    expect(ended.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(ended.details).toBe('invalid_token');
  });

  it("when a tenant admin removes the user's membership on instance B; the same user's stream for another tenant goes on", async () => {
    const inAcme = await liveStream((await tokenFor(a.url, BOB, 'acme')).access_token);
    const globex = await tokenFor(a.url, BOB, 'globex');
    const inGlobex = await liveStream(globex.access_token);
    const admin = { token: (await tokenFor(b.url, ALICE, 'acme')).access_token };

    const removed = await adminCall(
      b.url,
      admin,
      'DELETE',
      `/1/tenants/acme/members/${globex['user_id'] as string}`,
    );
    expect(removed.status).toBe(204);

    const ended = await inAcme.ended();
    expect(ended.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(ended.details).toBe('invalid_token');
    expect(await inGlobex.say('still here')).toBe('echo:still here');
    inGlobex.call.end();
    expect((await inGlobex.ended()).code).toBe(grpc.status.OK);
  });
});
