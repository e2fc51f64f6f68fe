/**
 * Issue 44: the two browser rules of `auth: session` routes, on requests
 * Node's own HTTP parser read from raw bytes (so header names and values are
 * as a client spelled them on the wire):
 *
 * - CSRF (`decide/session-origin.ts`, with the request's own origin from
 *   `decide/request-origin.ts`): a request a session admitted that may change
 *   something must say it comes from the same origin — `Sec-Fetch-Site:
 *   same-origin`, else `Origin` equal to the request's own; neither: refused;
 *   a WebSocket upgrade needs a same-origin `Origin` in any case;
 * - the sign-in redirect (`decide/sign-in-redirect.ts`, rendered by the one
 *   error renderer): a page load refused for want of a session is answered
 *   302 to `/1/sign-in?return_to=…`; anything else keeps its 401.
 *
 * `test/proxy/session-admission.test.ts` proves both again through a real
 * gateway, on every entry way.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenRefused } from '../../src/auth/tokens/token-refusals.js';
import { GatewayError, isGatewayError } from '../../src/errors.js';
import { responseOnSocket, sendError } from '../../src/http/respond.js';
import { normaliseTarget } from '../../src/proxy/decide/normalise-path.js';
import { createRequestOrigin } from '../../src/proxy/decide/request-origin.js';
import { checkSessionOrigin } from '../../src/proxy/decide/session-origin.js';
import { signInInstead } from '../../src/proxy/decide/sign-in-redirect.js';
import { createTrustCheck } from '../../src/proxy/decide/trusted-proxies.js';
import { originalMethods } from '../../src/proxy/decide/verify-request.js';
import { rawExchange } from '../support/raw-exchange.js';

let server: Server;
let port: number;

/**
 * `/csrf…`: the CSRF rule for a session-admitted request (`/csrf/public…`:
 * with `publicUrl: https://gw.example`; `/auth/verify`: forward-auth's, of the
 * original request). Any other path: the refusal `missing` (or `?reason=`)
 * of a session route, as answered (`/verify…`: as forward-auth answers it,
 * for `X-Original-URI`). Both answer through the one error renderer.
 */
function judge(req: IncomingMessage, res: ServerResponse): void {
  const url = req.url ?? '/';
  try {
    if (!url.startsWith('/csrf') && !url.startsWith('/auth/verify')) {
      const reason = new URL(url, 'http://x').searchParams.get('reason') ?? 'missing';
      const presented = req.headers.authorization !== undefined;
      const forwardAuth = url.startsWith('/verify');
      throw signInInstead(
        tokenRefused(reason as 'missing', 'A bearer token is required.'),
        req,
        normaliseTarget(forwardAuth ? (req.headers['x-original-uri'] as string) : url),
        forwardAuth ? originalMethods(req, '/auth/verify') : (req.method ?? 'GET'),
        presented,
        forwardAuth,
      );
    }
    const trusted = createTrustCheck(['127.0.0.1/32']);
    const origin = createRequestOrigin(
      url.startsWith('/csrf/untrusted') ? createTrustCheck([]) : trusted,
      url.startsWith('/csrf/public') ? 'https://gw.example' : undefined,
    );
    if (url.startsWith('/auth/verify')) {
      checkSessionOrigin(req, originalMethods(req, '/auth/verify'), origin(req, '/auth/verify'));
    } else checkSessionOrigin(req, req.method ?? 'GET', origin(req));
    res.writeHead(200, { 'content-type': 'text/plain' }).end('passed');
  } catch (err) {
    if (!isGatewayError(err)) throw err;
    sendError(res, err);
  }
}

beforeAll(async () => {
  server = createServer(judge);
  server.on('upgrade', (req: IncomingMessage, socket) => judge(req, responseOnSocket(req, socket)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

interface Answer {
  status: number;
  location: string | undefined;
  signIn: string | undefined;
  challenge: string | undefined;
  body: string;
}

async function send(method: string, path: string, lines: readonly string[]): Promise<Answer> {
  const head = [`${method} ${path} HTTP/1.1`, ...lines, 'Connection: close', '', ''];
  const raw = await rawExchange(port, head.join('\r\n'));
  const [top = '', body = ''] = raw.split('\r\n\r\n');
  const field = (name: string) =>
    new RegExp(`^${name}: (.*)$`, 'im').exec(top)?.[1]?.trim() ?? undefined;
  return {
    status: Number(top.split(' ')[1]),
    location: field('location'),
    signIn: field('x-sign-in-location'),
    challenge: field('www-authenticate'),
    body,
  };
}

const verdict = async (method: string, path: string, lines: readonly string[]) => {
  const answer = await send(method, path, lines);
  if (answer.status === 200) return 'passed';
  return `${answer.status} ${(JSON.parse(answer.body) as { error: string }).error}`;
};

const PASSED = 'passed';
const REFUSED = `403 ${'csrf_refused'}`;
const HOST = 'Host: app.test:8080';

/** An unsafe request's headers (besides Host) → the verdict. */
const UNSAFE: [string, string[], string][] = [
  ['Sec-Fetch-Site: same-origin', ['Sec-Fetch-Site: same-origin'], PASSED],
  ['Sec-Fetch-Site: same-site (a sibling host)', ['Sec-Fetch-Site: same-site'], REFUSED],
  ['Sec-Fetch-Site: cross-site', ['Sec-Fetch-Site: cross-site'], REFUSED],
  ['Sec-Fetch-Site: none (typed, bookmarked)', ['Sec-Fetch-Site: none'], REFUSED],
  ['Sec-Fetch-Site in upper case letters', ['SEC-FETCH-SITE: same-origin'], PASSED],
  ['Sec-Fetch-Site value in another case', ['Sec-Fetch-Site: Same-Origin'], REFUSED],
  [
    'cross-site Fetch Metadata beside a same Origin',
    ['Sec-Fetch-Site: cross-site', 'Origin: http://app.test:8080'],
    REFUSED,
  ],
  ['Origin equal to its own', ['Origin: http://app.test:8080'], PASSED],
  ['Origin in upper case letters (name)', ['ORIGIN: http://app.test:8080'], PASSED],
  ['Origin: null', ['Origin: null'], REFUSED],
  ['Origin of another port', ['Origin: http://app.test:8081'], REFUSED],
  ['Origin of the default port', ['Origin: http://app.test'], REFUSED],
  ['Origin of another scheme', ['Origin: https://app.test:8080'], REFUSED],
  ['Origin of a sibling host', ['Origin: http://evil.app.test:8080'], REFUSED],
  ['Origin with a path', ['Origin: http://app.test:8080/'], REFUSED],
  ['Origin empty', ['Origin: '], REFUSED],
  ['neither header', [], REFUSED],
];

describe.each(['POST', 'PUT', 'PATCH', 'DELETE'])('CSRF: %s with a session', (method) => {
  it.each(UNSAFE)('%s', async (_name, lines, expected) => {
    expect(await verdict(method, '/csrf', [HOST, ...lines])).toBe(expected);
  });
});

describe('CSRF: safe methods and the own origin', () => {
  it.each(['GET', 'HEAD', 'OPTIONS'])('%s passes cross-site: it changes nothing', async (m) => {
    const lines = [HOST, 'Sec-Fetch-Site: cross-site', 'Origin: https://evil.test'];
    expect(await verdict(m, '/csrf', lines)).toBe(PASSED);
  });

  it("takes a trusted proxy's X-Forwarded-Proto and -Host, and no one else's", async () => {
    const lines = [
      'Host: gw.internal',
      'X-Forwarded-Proto: https',
      'X-Forwarded-Host: app.test',
      'Origin: https://app.test',
    ];
    expect(await verdict('POST', '/csrf', lines)).toBe(PASSED);
    expect(await verdict('POST', '/csrf/untrusted', lines)).toBe(REFUSED);
    const untrusted = ['Host: app.test', 'X-Forwarded-Proto: https', 'Origin: https://app.test'];
    expect(await verdict('POST', '/csrf/untrusted', untrusted)).toBe(REFUSED);
  });

  it("takes publicUrl's scheme when TLS ends in front of the gateway", async () => {
    const lines = ['Host: app.test', 'Origin: https://app.test'];
    expect(await verdict('POST', '/csrf/public', lines)).toBe(PASSED);
    expect(await verdict('POST', '/csrf', lines)).toBe(REFUSED);
  });

  it('forward-auth: the original method and the original host, as the ingress reports them', async () => {
    const original = [
      'Host: gw.internal',
      'X-Forwarded-Host: app.test',
      'X-Forwarded-Proto: https',
    ];
    const post = [...original, 'X-Original-Method: POST'];
    expect(await verdict('GET', '/auth/verify', [...post, 'Origin: https://app.test'])).toBe(
      PASSED,
    );
    expect(await verdict('GET', '/auth/verify', [...post, 'Origin: https://evil.test'])).toBe(
      REFUSED,
    );
    expect(await verdict('GET', '/auth/verify', [...post, 'Sec-Fetch-Site: same-site'])).toBe(
      REFUSED,
    );
    const get = [...original, 'X-Original-Method: GET', 'Sec-Fetch-Site: cross-site'];
    expect(await verdict('GET', '/auth/verify', get)).toBe(PASSED);
    // Both ingresses' headers, one of them unsafe: the rule applies.
    const both = [...get, 'X-Forwarded-Method: DELETE'];
    expect(await verdict('GET', '/auth/verify', both)).toBe(REFUSED);
  });
});

describe('CSRF: a WebSocket upgrade with a session (cross-site WebSocket hijacking)', () => {
  const upgrade = [HOST, 'Connection: Upgrade', 'Upgrade: websocket'];

  it.each([
    ['Origin equal to its own', ['Origin: http://app.test:8080'], PASSED],
    [
      'Origin equal and Sec-Fetch-Site: same-origin',
      ['Origin: http://app.test:8080', 'Sec-Fetch-Site: same-origin'],
      PASSED,
    ],
    ['Sec-Fetch-Site: same-origin without Origin', ['Sec-Fetch-Site: same-origin'], REFUSED],
    ['Origin of another site', ['Origin: https://evil.test'], REFUSED],
    [
      'Origin equal, Sec-Fetch-Site: cross-site',
      ['Origin: http://app.test:8080', 'Sec-Fetch-Site: cross-site'],
      REFUSED,
    ],
    ['Origin: null', ['Origin: null'], REFUSED],
    ['neither header', [], REFUSED],
  ])('%s', async (_name, lines, expected) => {
    expect(await verdict('GET', '/csrf', [...upgrade, ...lines])).toBe(expected);
  });
});

describe('the sign-in redirect', () => {
  const SIGN_IN = '/1/sign-in?return_to=%2Fapp%2Fpage%3Fa%3D1%26b%3D%2F';
  const html = 'Accept: text/html,application/xhtml+xml;q=0.9,*/*;q=0.8';

  it.each([
    ['GET for HTML', 'GET', [html]],
    ['HEAD for HTML', 'HEAD', [html]],
    ['GET with Sec-Fetch-Mode: navigate (no Accept)', 'GET', ['Sec-Fetch-Mode: navigate']],
    ['GET for HTML, names in upper case', 'GET', ['ACCEPT: TEXT/HTML']],
  ])('%s without a session: 302 to sign in, back to the path and query', async (_n, m, lines) => {
    const answer = await send(m, '/app/page?a=1&b=/', ['Host: app.test', ...lines]);
    expect(answer.status).toBe(302);
    expect(answer.location).toBe(SIGN_IN);
    expect(answer.challenge).toBeUndefined();
  });

  it('sends an ended or forged session to sign in again too', async () => {
    const answer = await send('GET', '/redirect?reason=revoked', ['Host: a', html]);
    expect(answer.status).toBe(302);
    expect(answer.location).toBe('/1/sign-in?return_to=%2Fredirect%3Freason%3Drevoked');
  });

  it.each([
    ['a fetch for JSON', 'GET', '/redirect', ['Accept: application/json']],
    ['no Accept', 'GET', '/redirect', []],
    ['Accept: */*', 'GET', '/redirect', ['Accept: */*']],
    ['a form post (navigate, but POST)', 'POST', '/redirect', [html, 'Sec-Fetch-Mode: navigate']],
    ['a bearer beside it', 'GET', '/redirect', [html, 'Authorization: Bearer x']],
    ['two session cookies', 'GET', '/redirect?reason=two_cookies', [html]],
    [
      'a WebSocket upgrade',
      'GET',
      '/redirect',
      ['Sec-Fetch-Mode: navigate', 'Connection: Upgrade', 'Upgrade: websocket'],
    ],
  ])('%s: 401 invalid_token with its challenge', async (_n, method, path, lines) => {
    const answer = await send(method, path, ['Host: app.test', ...lines]);
    expect(answer.status).toBe(401);
    expect(answer.location).toBeUndefined();
    expect(answer.challenge).toBe('Bearer error="invalid_token"');
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'invalid_token' });
  });

  it('leaves any other refusal as it is', () => {
    const other = new GatewayError('tenant_mismatch', 'x');
    const req = { method: 'GET', headers: { accept: 'text/html' } } as IncomingMessage;
    expect(signInInstead(other, req, normaliseTarget('/a'), 'GET', false)).toBe(other);
  });

  it('forward-auth: still 401 (an auth request takes no 302), naming the sign-in for a page load', async () => {
    const original = ['Host: gw', 'X-Original-URI: /app/page?a=1&b=/'];
    const page = await send('GET', '/verify', [...original, 'X-Original-Method: GET', html]);
    expect(page).toMatchObject({ status: 401, location: undefined, signIn: SIGN_IN });
    expect(page.challenge).toBe('Bearer error="invalid_token"');
    const post = await send('GET', '/verify', [...original, 'X-Original-Method: POST', html]);
    expect(post).toMatchObject({ status: 401, signIn: undefined });
    const fetched = await send('GET', '/verify', [...original, 'Accept: application/json']);
    expect(fetched).toMatchObject({ status: 401, signIn: undefined });
  });
});
