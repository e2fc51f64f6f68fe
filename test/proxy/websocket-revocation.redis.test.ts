/**
 * Issue 12, class 4 (DESIGN §2): revocation, a password change, a removed
 * membership and token expiry also close open WebSockets, with close code
 * 1008 (policy violation), on every instance — the change is made through
 * instance B, the WebSocket runs through instance A.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { loadKeySet } from '../../src/auth/tokens/keys.js';
import { issueAccessToken } from '../../src/auth/tokens/tokens.js';
import { basic, bearer, type TestGateway } from '../support/gateway.js';
import { fixtureSuite } from '../support/fixture-suite.js';
import { BOB, startIdentityFixture, tokenFor } from '../support/identity-fixture.js';
import { startWebSocketUpstream } from '../support/upstream.js';
import * as grpc from '@grpc/grpc-js';
import { echoClient, startEchoUpstream, withToken, type EchoMsg } from '../support/grpc-echo.js';

const s = fixtureSuite(
  { upstream: startWebSocketUpstream, grpcEcho: startEchoUpstream },
  ({ upstream, grpcEcho }) => ({
    // HTTP/2 beside HTTP/1.1 on the main listener, for the gRPC case (issue 47).
    listen: { http2: true },
    routes: [
      { prefix: '/live', upstream: upstream.url },
      { prefix: '/test.echo.Echo', upstream: grpcEcho.url, protocol: 'grpc' },
    ],
  }),
  {
    start: (config) => startIdentityFixture(config),
  },
);
let a: TestGateway;
let b: TestGateway;
let redis: Redis;

beforeAll(async () => {
  a = s.fx.gw;
  b = await s.fx.startAnother();
  redis = new Redis(s.fx.redis.url);
});
afterAll(() => redis.disconnect());

/** A WebSocket through `gw`, and how it ended once it has. */
interface Opened {
  ws: WebSocket;
  closed: Promise<{ code: number; reason: string }>;
}

function open(gw: TestGateway, token: string): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${gw.url.replace(/^http:/, 'ws:')}/live/feed`, {
      headers: { authorization: bearer(token) },
    });
    const closed = new Promise<{ code: number; reason: string }>((done) =>
      ws.once('close', (code, reason) => done({ code, reason: reason.toString() })),
    );
    ws.on('error', () => {});
    ws.once('open', () => resolve({ ws, closed }));
    ws.once('unexpected-response', (_req, res) =>
      reject(new Error(`upgrade refused: ${res.statusCode}`)),
    );
  });
}

/** Sends `text`, resolves with the echo. */
function echo(ws: WebSocket, text: string): Promise<string> {
  return new Promise((resolve) => {
    ws.once('message', (data) => resolve(String(data)));
    ws.send(text);
  });
}

/** Resolves with how the WebSocket closed; rejects past `ms` (a bounded wait, not a duration). */
function closeOf(opened: Opened, ms = 5000): Promise<{ code: number; reason: string }> {
  return Promise.race([
    opened.closed,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`still open after ${ms} ms`)), ms),
    ),
  ]);
}

async function signUp(email: string, password: string): Promise<string> {
  const res = await fetch(`${a.url}/1/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { tenant_id: string }).tenant_id;
}

describe('a live gRPC stream through instance A (issue 47)', () => {
  it('ends with UNAUTHENTICATED invalid_token when its token is revoked on instance B', async () => {
    const token = (await tokenFor(a.url, BOB, 'globex')).access_token;
    const client = echoClient(new URL(a.url).host);
    const call = client.Bidi(withToken(token)) as grpc.ClientDuplexStream<EchoMsg, EchoMsg>;
    call.on('error', () => {});
    const status = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
    const first = new Promise<EchoMsg>((resolve) => call.once('data', resolve));
    call.write({ text: 'before' });
    expect((await first).text).toBe('echo:before');

    const del = await fetch(`${b.url}/1/token`, {
      method: 'DELETE',
      headers: { authorization: bearer(token) },
    });
    expect(del.status).toBe(204);

    const ended = await Promise.race([
      status,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('the stream is still open after 5 s')), 5000),
      ),
    ]);
    expect(ended.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(ended.details).toBe('invalid_token');
    client.close();
  });
});

describe('an open WebSocket through instance A', () => {
  it('closes with 1008 when its token is revoked on instance B; others stay open', async () => {
    const token = (await tokenFor(a.url, BOB, 'globex')).access_token;
    const other = (await tokenFor(a.url, BOB, 'globex')).access_token;
    const revoked = await open(a, token);
    const kept = await open(a, other);
    expect(await echo(revoked.ws, 'before')).toBe('before');

    const del = await fetch(`${b.url}/1/token`, {
      method: 'DELETE',
      headers: { authorization: bearer(token) },
    });
    expect(del.status).toBe(204);

    expect(await closeOf(revoked)).toEqual({ code: 1008, reason: 'The token has been revoked.' });
    expect(await echo(kept.ws, 'still here')).toBe('still here');
    kept.ws.close();
  });

  it("closes with 1008 when the user's password changes on instance B", async () => {
    const email = 'wanda@example.com';
    const tenantId = await signUp(email, 'wanda-password-1');
    const token = (await tokenFor(a.url, { email, password: 'wanda-password-1' }, tenantId))
      .access_token;
    const opened = await open(a, token);
    expect(await echo(opened.ws, 'before')).toBe('before');

    const change = await fetch(`${b.url}/1/users/current/password`, {
      method: 'PUT',
      headers: {
        authorization: basic(email, 'wanda-password-1'),
        'content-type': 'application/json',
      },
      body: JSON.stringify({ password: 'wanda-password-2' }),
    });
    expect(change.status).toBe(204);

    expect(await closeOf(opened)).toEqual({
      code: 1008,
      reason: 'The session has ended (password changed).',
    });
  });

  it("closes with 1008 when the user's membership of its tenant is removed on instance B", async () => {
    const acme = await tokenFor(a.url, BOB, 'acme');
    const globex = await tokenFor(a.url, BOB, 'globex');
    const inAcme = await open(a, acme.access_token);
    const inGlobex = await open(a, globex.access_token);
    expect(await echo(inAcme.ws, 'before')).toBe('before');

    expect(await b.gateway.store.memberships.removeMember('acme', acme['user_id'] as string)).toBe(
      true,
    );

    expect(await closeOf(inAcme)).toEqual({
      code: 1008,
      reason: "The user is no longer a member of the token's tenant.",
    });
    // Only that tenant: the same user's WebSocket for another tenant goes on.
    expect(await echo(inGlobex.ws, 'still here')).toBe('still here');
    inGlobex.ws.close();
  });

  it('a member removed and added back: the old WebSocket stays closed, its token opens no new one', async () => {
    const email = 'yolanda@example.com';
    const who = { email, password: 'yolanda-password-1' };
    await signUp(email, who.password);
    const userId = (await b.gateway.store.users.findUserByEmail(email))?.id as string;
    expect(await b.gateway.store.memberships.addMember('globex', userId)).toBe(true);
    const old = (await tokenFor(a.url, who, 'globex')).access_token;
    const opened = await open(a, old);
    expect(await echo(opened.ws, 'before')).toBe('before');

    expect(await b.gateway.store.memberships.removeMember('globex', userId)).toBe(true);
    expect(await closeOf(opened)).toEqual({
      code: 1008,
      reason: "The user is no longer a member of the token's tenant.",
    });
    expect(await b.gateway.store.memberships.addMember('globex', userId)).toBe(true);

    // On both instances, the old token's upgrade is refused; a new token's is not.
    for (const gw of [a, b]) {
      await expect(open(gw, old)).rejects.toThrow('upgrade refused: 401');
      const renewed = await open(gw, (await tokenFor(gw.url, who, 'globex')).access_token);
      expect(await echo(renewed.ws, 'again')).toBe('again');
      renewed.ws.close();
    }
  });

  it('closes with 1008 when its token expires', async () => {
    const email = 'xavier@example.com';
    const tenantId = await signUp(email, 'xavier-password-1');
    const userId = (await tokenFor(a.url, { email, password: 'xavier-password-1' }, tenantId))[
      'user_id'
    ] as string;
    // A token issued ten minutes ago by the shared key: valid (ttl 600 s, skew 30 s) for 5 s more.
    const keyring = { current: await loadKeySet(s.fx.keys.dir, { warn: () => {} }) };
    const settings = {
      issuer: 'tenant-gateway',
      audience: 'tenant-api',
      ttlSeconds: 600,
      algorithms: ['EdDSA' as const, 'ES256' as const],
      clockSkewSeconds: 30,
    };
    const now = Math.floor(Date.now() / 1000);
    const { token } = await issueAccessToken(
      keyring,
      settings,
      {
        userId,
        email,
        sessionVersion: 0,
        tenantId,
        tenantType: 'usertenant',
        membershipGeneration: (
          await a.gateway.store.memberships.membershipForToken(tenantId, userId)
        )?.generation as number,
      },
      now - 625,
    );
    const opened = await open(a, token);
    expect(await echo(opened.ws, 'before expiry')).toBe('before expiry');
    expect(await closeOf(opened, 10_000)).toEqual({ code: 1008, reason: 'The token has expired.' });
  });

  it('closes with 1008 a token revoked while event delivery was down, once it is back', async () => {
    const token = (await tokenFor(a.url, BOB, 'globex')).access_token;
    const opened = await open(a, token);
    expect(await echo(opened.ws, 'before')).toBe('before');
    const { jti } = JSON.parse(
      Buffer.from(token.split('.')[1] as string, 'base64url').toString(),
    ) as { jti: string };
    const prefix = (s.fx.config.store as { redis: { keyPrefix: string } }).redis.keyPrefix;
    // Cut every instance's event channel, then deny-list the token behind their backs.
    await redis.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
    await redis.set(`${prefix}revoked:{${jti}}`, '1', 'EX', 600);
    expect(await closeOf(opened, 10_000)).toEqual({
      code: 1008,
      reason: 'The token has been revoked.',
    });
  });
});

describe('with Redis down', () => {
  it('an open WebSocket whose token can no longer be checked is closed with 1013 (try again later)', async () => {
    const down = await startIdentityFixture({
      routes: [{ prefix: '/live', upstream: s.up.upstream.url }],
    });
    try {
      const token = (await tokenFor(down.gw.url, BOB, 'globex')).access_token;
      const opened = await open(down.gw, token);
      expect(await echo(opened.ws, 'before')).toBe('before');
      await down.redis.kill();
      // Fail closed: a revocation could now go unheard, and the store cannot be asked.
      expect((await closeOf(opened, 15_000)).code).toBe(1013);
    } finally {
      await down.close();
    }
  });
});
