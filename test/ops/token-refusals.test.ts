/**
 * Issue 30, item 7: `invalid_token` is one answer for many causes. The client
 * still gets exactly today's 401 (body and challenge: no oracle beyond RFC
 * 6750), while the operator gets why — `tokenRefusal` in the access line (the
 * `upgrade refused` line for a WebSocket) and
 * `tenant_gateway_token_refusals_total{reason}` — for every cause, on every
 * entry way: the proxy, the api's Bearer endpoints, forward-auth and a
 * WebSocket upgrade. Real tokens revoked, ended by a password change, a
 * removed membership and a removed user; forged ones signed with the
 * gateway's own key where the point is a wrong claim.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { SignJWT, type JWTPayload } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { secretDigest } from '../../src/auth/sessions/session-cookie-value.js';
import { TOKEN_REFUSALS, type TokenRefusal } from '../../src/auth/tokens/token-refusals.js';
import type { BrowserSessionRecord } from '../../src/store/browser-sessions.js';
import { fixtureSuite } from '../support/fixture-suite.js';
import { adminUrlOf, basic, bearer } from '../support/gateway.js';
import { ALICE, tokenFor } from '../support/identity-fixture.js';
import { lineOf } from '../support/log-lines.js';
import { clientToken, forgedApiKey, makeApiKey, makeClient } from '../support/machine-client.js';
import { scrape, total } from '../support/prometheus-text.js';
import { rawUpgrade } from '../support/raw-upgrade.js';
import { startEchoUpstream } from '../support/upstream.js';

const s = fixtureSuite(
  { echo: startEchoUpstream },
  ({ echo }) => ({
    routes: [
      { prefix: '/api', upstream: echo.url },
      { prefix: '/app', upstream: echo.url, auth: 'session' },
    ],
    apiKeys: { enabled: true },
    sessions: { enabled: true },
  }),
  { logged: true, token: true },
);
let claims: JWTPayload;

beforeAll(() => {
  claims = JSON.parse(Buffer.from(s.token.split('.')[1] as string, 'base64url').toString());
});

const now = () => Math.floor(Date.now() / 1000);

/** A token with Alice's acme claims and `overrides`, signed with the gateway's own key by default. */
function forge(
  overrides: Record<string, unknown>,
  header: Record<string, unknown> = {},
  key: Parameters<SignJWT['sign']>[0] = createPrivateKey(s.fx.keys.pem),
): Promise<string> {
  return new SignJWT({ ...claims, jti: `forged-${Math.random()}`, ...overrides })
    .setProtectedHeader({ alg: 'EdDSA', kid: s.fx.keys.kid, typ: 'at+jwt', ...header })
    .sign(key);
}

/** A user of their own (signed up now), member of `acme` too, and a token for `tenantId`. */
async function newUser(tenantId?: string) {
  const email = `u-${Math.random().toString(36).slice(2)}@example.com`;
  const password = 'their-password-1';
  const res = await fetch(`${s.gw.url}/1/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  expect(res.status).toBe(201);
  const user = (await res.json()) as { user_id: string; tenant_id: string };
  await s.gw.gateway.store.memberships.addMember('acme', user.user_id);
  const token = (await tokenFor(s.gw.url, { email, password }, tenantId ?? user.tenant_id))
    .access_token;
  return { ...user, email, password, token };
}

interface Case {
  name: string;
  reason: TokenRefusal;
  /** The `error_description` the client got before this change, and still gets. */
  description: string;
  /** The Authorization header (undefined: none). */
  authorization: () => Promise<string | undefined>;
  /** An API key: not a credential of the api's endpoints (there it is a malformed token). */
  apiKey?: true;
}

const CASES: Case[] = [
  {
    name: 'no Authorization header',
    reason: 'missing',
    description: 'A bearer token is required.',
    authorization: async () => undefined,
  },
  {
    name: 'Basic credentials where a bearer is due',
    reason: 'not_bearer',
    description: 'The Authorization header is not a bearer token.',
    authorization: async () => basic(ALICE.email, ALICE.password),
  },
  {
    name: 'two tokens in one header',
    reason: 'not_bearer',
    description: 'The Authorization header is not a bearer token.',
    authorization: async () => `Bearer ${await forge({})} ${await forge({})}`,
  },
  {
    name: 'a bearer that is not a JWT',
    reason: 'malformed',
    description: 'The token is malformed.',
    authorization: async () => bearer('not-a-jwt'),
  },
  {
    name: 'a flipped signature',
    reason: 'bad_signature',
    description: 'The token signature is not valid.',
    authorization: async () => {
      const [h, p, s] = (await forge({})).split('.') as [string, string, string];
      return bearer(`${h}.${p}.${(s[0] === 'A' ? 'B' : 'A') + s.slice(1)}`);
    },
  },
  {
    name: 'another key under our kid',
    reason: 'bad_signature',
    description: 'The token signature is not valid.',
    authorization: async () =>
      bearer(await forge({}, {}, generateKeyPairSync('ed25519').privateKey)),
  },
  {
    name: 'a kid no key has',
    reason: 'unknown_kid',
    description: 'The token was not signed by a known key.',
    authorization: async () =>
      bearer(await forge({}, { kid: 'no-such-kid' }, generateKeyPairSync('ed25519').privateKey)),
  },
  {
    name: 'no kid',
    reason: 'unknown_kid',
    description: 'The token was not signed by a known key.',
    authorization: async () => bearer(await forge({}, { kid: undefined })),
  },
  {
    name: 'HS256 signed with the public key as the secret',
    reason: 'wrong_alg',
    description: 'The token is signed with an algorithm that is not accepted.',
    authorization: async () => {
      const publicPem = createPublicKey(s.fx.keys.pem).export({ type: 'spki', format: 'pem' });
      return bearer(await forge({}, { alg: 'HS256' }, Buffer.from(publicPem)));
    },
  },
  {
    name: 'ES256 under the kid of our EdDSA key',
    reason: 'wrong_alg',
    description: 'The token was not signed by a known key.',
    authorization: async () => {
      // ES256 is accepted (the default algorithms), but not for this kid's key.
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      return bearer(await forge({}, { alg: 'ES256' }, privateKey));
    },
  },
  {
    name: 'the wrong issuer',
    reason: 'wrong_issuer',
    description: "The token's iss claim is not acceptable.",
    authorization: async () => bearer(await forge({ iss: 'someone-else' })),
  },
  {
    name: 'the wrong audience',
    reason: 'wrong_audience',
    description: "The token's aud claim is not acceptable.",
    authorization: async () => bearer(await forge({ aud: 'another-api' })),
  },
  {
    name: 'typ JWT',
    reason: 'wrong_type',
    description: "The token's typ claim is not acceptable.",
    authorization: async () => bearer(await forge({}, { typ: 'JWT' })),
  },
  {
    name: 'expired beyond the clock skew',
    reason: 'expired',
    description: 'The token has expired.',
    authorization: async () => bearer(await forge({ iat: now() - 700, exp: now() - 31 })),
  },
  {
    name: 'issued longer than ttlSeconds ago, whatever its exp says',
    reason: 'expired',
    description: 'The token has expired.',
    authorization: async () => bearer(await forge({ iat: now() - 700, exp: now() + 3600 })),
  },
  {
    name: 'not yet valid',
    reason: 'not_yet_valid',
    description: "The token's nbf claim is not acceptable.",
    authorization: async () => bearer(await forge({ nbf: now() + 120 })),
  },
  {
    name: 'issued in the future',
    reason: 'issued_in_future',
    description: "The token's iat claim is not acceptable.",
    authorization: async () => bearer(await forge({ iat: now() + 120, exp: now() + 720 })),
  },
  {
    name: 'no iat',
    reason: 'claims',
    description: "The token's iat claim is not acceptable.",
    authorization: async () => bearer(await forge({ iat: undefined })),
  },
  {
    name: 'no tenant_id',
    reason: 'claims',
    description: 'The token lacks required claims.',
    authorization: async () => bearer(await forge({ tenant_id: undefined })),
  },
  {
    name: 'revoked by DELETE /1/token',
    reason: 'revoked',
    description: 'The token has been revoked.',
    authorization: async () => {
      const { token } = await newUser();
      const res = await fetch(`${s.gw.url}/1/token`, {
        method: 'DELETE',
        headers: { authorization: bearer(token) },
      });
      expect(res.status).toBe(204);
      return bearer(token);
    },
  },
  {
    name: 'issued before a password change',
    reason: 'session_ended',
    description: 'The session has ended (password changed).',
    authorization: async () => {
      const user = await newUser();
      const res = await fetch(`${s.gw.url}/1/users/current/password`, {
        method: 'PUT',
        headers: {
          authorization: basic(user.email, user.password),
          'content-type': 'application/json',
        },
        body: JSON.stringify({ password: 'another-password-2' }),
      });
      expect(res.status).toBe(204);
      return bearer(user.token);
    },
  },
  {
    name: 'for a tenant the user was removed from',
    reason: 'membership_ended',
    description: "The user is no longer a member of the token's tenant.",
    authorization: async () => {
      const user = await newUser('acme');
      expect(await s.gw.gateway.store.memberships.removeMember('acme', user.user_id)).toBe(true);
      return bearer(user.token);
    },
  },
  {
    name: 'of a machine client since removed',
    reason: 'client_ended',
    description: 'The client the token was issued to was removed or rotated.',
    authorization: async () => {
      const client = await makeClient(s.gw.gateway.store, 'acme', []);
      const token = await clientToken(s.gw.url, client);
      expect(await s.gw.gateway.store.clients.removeClient(client.clientId)).toEqual([]);
      return bearer(token);
    },
  },
  {
    name: 'an API key one character off (its checksum fails)',
    reason: 'malformed_key',
    description: 'The API key is malformed.',
    apiKey: true,
    authorization: async () => {
      const { clientId } = await makeClient(s.gw.gateway.store, 'acme', []);
      const { apiKey } = await makeApiKey(s.gw.gateway.store, clientId);
      return bearer(`${apiKey.slice(0, 30)}${apiKey[30] === 'A' ? 'B' : 'A'}${apiKey.slice(31)}`);
    },
  },
  {
    name: 'an API key the store has not',
    reason: 'unknown_key',
    description: 'The API key is not known.',
    apiKey: true,
    authorization: async () => {
      const { clientId } = await makeClient(s.gw.gateway.store, 'acme', []);
      const { apiKey } = await makeApiKey(s.gw.gateway.store, clientId);
      return bearer(forgedApiKey(apiKey, 30));
    },
  },
  {
    name: 'an API key accepted, then removed',
    reason: 'key_ended',
    description: 'The API key was removed or has expired, or its client was.',
    apiKey: true,
    authorization: async () => {
      const { clientId } = await makeClient(s.gw.gateway.store, 'acme', []);
      const { keyId, apiKey } = await makeApiKey(s.gw.gateway.store, clientId);
      expect((await fetchAnswer('/api/x', bearer(apiKey))).status).toBe(200);
      expect(await s.gw.gateway.store.apiKeys.removeApiKey(clientId, keyId)).toBe(true);
      return bearer(apiKey);
    },
  },
  {
    name: 'of a user since removed',
    reason: 'unknown_user',
    description: 'The token names an unknown user.',
    authorization: async () => {
      const user = await newUser();
      expect(await s.gw.gateway.store.users.removeUser(user.user_id)).not.toBeNull();
      return bearer(user.token);
    },
  },
];

/** Reasons proven by a case of their own below, not by a bearer: a cookie's. */
const COOKIE_CASES: TokenRefusal[] = [
  'two_cookies',
  'session_unknown',
  'session_secret',
  'session_idle',
  'session_expired',
];

/** One answer, as the client saw it, and the request id to find its log line by. */
interface Answer {
  status: number;
  body: string;
  challenge: string | null;
  requestId: string;
}

/** The four ways a bearer token reaches the gateway. */
const WAYS: {
  name: string;
  send: (authorization: string | undefined) => Promise<Answer>;
  /** The `msg` of the line that logs the refusal. */
  msg: string;
}[] = [
  {
    name: 'proxy',
    send: (authorization) => fetchAnswer('/api/x', authorization),
    msg: 'request',
  },
  {
    name: 'api',
    send: (authorization) => fetchAnswer('/1/tenants/current', authorization),
    msg: 'request',
  },
  {
    name: 'forward-auth',
    send: (authorization) =>
      fetchAnswer('/auth/verify', authorization, { 'x-original-uri': '/api/x' }),
    msg: 'request',
  },
  {
    name: 'websocket upgrade',
    async send(authorization) {
      const raw = await rawUpgrade(
        s.gw.url,
        '/api/ws',
        authorization === undefined ? [] : [`Authorization: ${authorization}`],
        'close',
      );
      const [head = '', body = ''] = raw.split('\r\n\r\n');
      const header = (name: string) => new RegExp(`^${name}: (.*)$`, 'im').exec(head)?.[1] ?? null;
      return {
        status: Number(head.split(' ')[1]),
        body,
        challenge: header('www-authenticate'),
        requestId: header('x-request-id') ?? '',
      };
    },
    msg: 'upgrade refused',
  },
];

async function fetchAnswer(
  path: string,
  authorization: string | undefined,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(`${s.gw.url}${path}`, {
    headers: authorization === undefined ? headers : { ...headers, authorization },
  });
  return {
    status: res.status,
    body: await res.text(),
    challenge: res.headers.get('www-authenticate'),
    requestId: res.headers.get('x-request-id') ?? '',
  };
}

/** `tenant_gateway_token_refusals_total` by reason. */
async function refusalCounts(): Promise<Record<string, number>> {
  const samples = await scrape(adminUrlOf(s.gw));
  return Object.fromEntries(
    TOKEN_REFUSALS.map((reason) => [
      reason,
      total(samples, 'tenant_gateway_token_refusals_total', { reason }),
    ]),
  );
}

/** The three ways a session cookie reaches the gateway, each sending its own `Cookie` line. */
function cookieWays(): [string, (cookie: string) => Promise<Answer>, string][] {
  return [
    ['proxy', (cookie) => fetchAnswer('/app/x', undefined, { cookie }), 'request'],
    [
      'forward-auth',
      (cookie) => fetchAnswer('/auth/verify', undefined, { cookie, 'x-original-uri': '/app/x' }),
      'request',
    ],
    [
      'websocket upgrade',
      async (cookie) => {
        const raw = await rawUpgrade(s.gw.url, '/app/ws', [`Cookie: ${cookie}`], 'close');
        const [head = '', body = ''] = raw.split('\r\n\r\n');
        const header = (name: string) =>
          new RegExp(`^${name}: (.*)$`, 'im').exec(head)?.[1] ?? null;
        return {
          status: Number(head.split(' ')[1]),
          body,
          challenge: header('www-authenticate'),
          requestId: header('x-request-id') ?? '',
        };
      },
      'upgrade refused',
    ],
  ];
}

/** Each way refuses its cookie (of `cookies()`, one per way) with `reason` in the log and the metric only. */
async function expectCookieRefusals(
  reason: TokenRefusal,
  description: string,
  cookies: () => string[] | Promise<string[]>,
): Promise<void> {
  const lines = await cookies();
  for (const [i, [way, send, msg]] of cookieWays().entries()) {
    const before = await refusalCounts();
    const answer = await send(lines[i] as string);
    expect({ way, status: answer.status, body: JSON.parse(answer.body) as unknown }).toEqual({
      way,
      status: 401,
      body: { error: 'invalid_token', error_description: description },
    });
    expect(answer.challenge).toBe('Bearer error="invalid_token"');
    expect(await lineOf(s.lines, answer.requestId, msg), way).toMatchObject({
      status: 401,
      reason: 'invalid_token',
      tokenRefusal: reason,
    });
    await delay(20);
    const after = await refusalCounts();
    expect(after[reason], way).toBe((before[reason] as number) + 1);
  }
}

const b64url = (bytes: number) => randomBytes(bytes).toString('base64url');

/** A real session of Alice's at acme: its record, to copy from. */
async function aliceSession(): Promise<BrowserSessionRecord> {
  const user = await s.gw.gateway.store.users.findUserByEmail(ALICE.email);
  const started = await s.gw.gateway.browserSessions.start({
    userId: user?.id as string,
    tenantId: 'acme',
    userAgent: 'test',
    ip: '127.0.0.1',
  });
  return started.session;
}

/** A session stored as `changes` say, with a secret of its own: its cookie line. */
async function storedSession(changes: Partial<BrowserSessionRecord>): Promise<string> {
  const secret = b64url(32);
  const record = {
    ...(await aliceSession()),
    sessionId: `ses_${b64url(16)}`,
    digest: secretDigest(secret),
    ...changes,
  };
  await s.gw.gateway.store.browserSessions.createBrowserSession(record);
  return `__Host-tg_session=${record.sessionId}.${secret}`;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

const SESSION_CASES: { reason: TokenRefusal; cookies: () => Promise<string[]> }[] = [
  {
    reason: 'session_unknown',
    cookies: async () => [0, 1, 2].map(() => `__Host-tg_session=ses_${b64url(16)}.${b64url(32)}`),
  },
  {
    reason: 'session_secret',
    cookies: async () => {
      const { sessionId } = await aliceSession();
      return [0, 1, 2].map(() => `__Host-tg_session=${sessionId}.${b64url(32)}`);
    },
  },
  {
    // Unused for longer than sessions.idleTimeoutSeconds (28,800 s by default) everywhere.
    reason: 'session_idle',
    cookies: () =>
      Promise.all([0, 1, 2].map(() => storedSession({ lastSeenAt: nowSeconds() - 30_000 }))),
  },
  {
    // Admitted while alive (this instance keeps it), refused once its absolute end passed.
    reason: 'session_expired',
    cookies: async () => {
      const end = nowSeconds() + 2;
      const lines = await Promise.all(
        [0, 1, 2].map(() => storedSession({ absoluteExpiresAt: end })),
      );
      for (const cookie of lines)
        expect((await fetch(`${s.gw.url}/app/x`, { headers: { cookie } })).status).toBe(200);
      await delay(Math.max(0, end * 1000 - Date.now()) + 50);
      return lines;
    },
  },
];

describe('a refused token says why in the log and the metric, and nothing more to the client', () => {
  it('exports every reason from the start, at 0 before any refusal', async () => {
    const samples = await scrape(adminUrlOf(s.gw));
    for (const reason of TOKEN_REFUSALS) {
      expect(
        samples.some(
          (s) => s.name === 'tenant_gateway_token_refusals_total' && s.labels.reason === reason,
        ),
        reason,
      ).toBe(true);
    }
  });

  it('every reason of the list has a case below', () => {
    const cases = [...CASES.map((c) => c.reason), ...COOKIE_CASES];
    expect(new Set(cases)).toEqual(new Set(TOKEN_REFUSALS));
  });

  it('two session cookies on a session route (issue 44): two_cookies', async () => {
    const cookie = '__Host-tg_session=ses_a.x; __Host-tg_session=ses_b.y';
    await expectCookieRefusals(
      'two_cookies',
      'The request carries two session cookies; sign out and in again.',
      () => [cookie, cookie, cookie],
    );
  });

  it.each(SESSION_CASES)(
    'a session cookie on a session route (issue 44): $reason',
    async ({ reason, cookies }) => {
      await expectCookieRefusals(reason, 'The session is not valid; sign in again.', cookies);
    },
  );

  it.each(CASES)('$name: $reason', async ({ reason, description, authorization: make, apiKey }) => {
    const authorization = await make();
    for (const way of WAYS) {
      if (apiKey && way.name === 'api') continue;
      const before = await refusalCounts();
      const answer = await way.send(authorization);
      expect({ way: way.name, status: answer.status, body: answer.body }).toEqual({
        way: way.name,
        status: 401,
        body: `${JSON.stringify({ error: 'invalid_token', error_description: description })}\n`,
      });
      // A request without bearer credentials (none, or another scheme) is challenged with the
      // realm alone (RFC 6750 §3.1); a bearer that fails, with the error code.
      expect(answer.challenge).toBe(
        authorization !== undefined && /^Bearer(?:[ \t]|$)/i.test(authorization)
          ? 'Bearer error="invalid_token"'
          : 'Bearer realm="tenant-gateway"',
      );
      expect(await lineOf(s.lines, answer.requestId, way.msg), way.name).toMatchObject({
        status: 401,
        reason: 'invalid_token',
        tokenRefusal: reason,
      });
      await delay(20);
      const after = await refusalCounts();
      const changed = Object.fromEntries(
        TOKEN_REFUSALS.map((r) => [r, (after[r] as number) - (before[r] as number)]).filter(
          ([, n]) => n !== 0,
        ),
      );
      expect(changed, way.name).toEqual({ [reason]: 1 });
    }
  });

  it('an accepted request carries no tokenRefusal and counts none', async () => {
    const before = await refusalCounts();
    const answer = await fetchAnswer('/api/x', bearer(await forge({})));
    expect(answer.status).toBe(200);
    expect(await lineOf(s.lines, answer.requestId)).not.toHaveProperty('tokenRefusal');
    await delay(20);
    expect(await refusalCounts()).toEqual(before);
  });
});
