/**
 * Issue 12, class 1 (request smuggling) and class 7 (identity-like headers,
 * the upgrade's Connection): hostile bytes on raw sockets against a real
 * gateway, in front of a recording upstream (node:http, llhttp) that logs
 * every request it parses on every connection and answers each with a body
 * naming the headers it saw.
 *
 * One row per case: the bytes sent (one or more connections, one after the
 * other), what each client must get, what the upstream must parse. What
 * matters: the upstream parsed exactly the requests the gateway accepted,
 * each carrying only the gateway's identity headers, and no client ever
 * receives an answer meant for another request.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, validateConfig } from '../../src/config/index.js';
import { foldHeaderName } from '../../src/header-names.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { fixtureSuite } from '../support/fixture-suite.js';
import { ALICE, BOB, tokenFor } from '../support/identity-fixture.js';
import {
  startRecordingUpstream,
  STRAY_BODY,
  type ParsedRequest,
  type RecordingUpstream,
} from '../support/recording-upstream.js';
import { startWebSocketUpstream, waitFor } from '../support/upstream.js';

type User = 'alice' | 'bob';
interface Identity {
  token: string;
  userId: string;
  email: string;
  tenantId: string;
}
const users = {} as Record<User, Identity>;

const s = fixtureSuite(
  { upstream: startRecordingUpstream, stray: startRecordingUpstream, live: startWebSocketUpstream },
  ({ upstream, stray, live }) => ({
    routes: [
      { prefix: '/orders', upstream: upstream.url, tenant: { header: 'X-Tenant-Id' } },
      { prefix: '/stray', upstream: stray.url },
      { prefix: '/live', upstream: live.url },
    ],
  }),
);
let gatewayUrl: URL;
let upstream: RecordingUpstream;
let stray: RecordingUpstream;

beforeAll(async () => {
  ({ upstream, stray } = s.up);
  gatewayUrl = new URL(s.fx.gw.url);
  for (const [user, who, tenant] of [
    ['alice', ALICE, 'acme'],
    ['bob', BOB, 'globex'],
  ] as const) {
    const t = await tokenFor(s.fx.gw.url, who, tenant);
    users[user] = {
      token: t.access_token,
      userId: t.user_id as string,
      email: who.email,
      tenantId: tenant,
    };
  }
});

// ---- what goes on the wire -------------------------------------------------

/** A request hidden in a body: it names another tenant and a user nobody verified. */
const SMUGGLED =
  'GET /orders/smuggled HTTP/1.1\r\nHost: upstream\r\nX-Tenant-Id: globex\r\n' +
  'X-User-Id: evil\r\nX-User-Email: evil@example.com\r\nContent-Length: 0\r\n\r\n';

/** A request head; the last request of a connection asks for `Connection: close`. */
function head(
  method: string,
  path: string,
  user: User,
  lines: string[] = [],
  close = true,
): string {
  const all = [
    `${method} ${path} HTTP/1.1`,
    `Host: ${gatewayUrl.host}`,
    `Authorization: Bearer ${users[user].token}`,
    ...lines,
    ...(close ? ['Connection: close'] : []),
  ];
  return `${all.join('\r\n')}\r\n\r\n`;
}

/** `body` as two chunks, then the last chunk and an empty trailer section (or `trailer`). */
function chunked(body: string, trailer = ''): string {
  const half = Math.floor(body.length / 2);
  const chunk = (s: string) => `${s.length.toString(16)}\r\n${s}\r\n`;
  return `${chunk(body.slice(0, half))}${chunk(body.slice(half))}0\r\n${trailer}\r\n`;
}

// ---- what comes back -------------------------------------------------------

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends `bytes` on a fresh connection and reads until the gateway closes it
 * (every row ends with `Connection: close` or a refusal). Responses are cut
 * by their Content-Length, which every answer here carries; `heads` marks the
 * answers to HEAD requests, which have none.
 */
function exchange(bytes: string, heads: boolean[] = []): Promise<RawResponse[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(gatewayUrl.port), gatewayUrl.hostname);
    const chunks: Buffer[] = [];
    // A gateway that keeps the connection open fails the row, it does not hang it.
    socket.setTimeout(5000, () => socket.destroy());
    socket.on('connect', () => socket.write(bytes, 'latin1'));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      try {
        resolve(splitResponses(Buffer.concat(chunks), heads));
      } catch (err) {
        reject(err as Error);
      }
    });
  });
}

function splitResponses(raw: Buffer, heads: boolean[]): RawResponse[] {
  const responses: RawResponse[] = [];
  let at = 0;
  let final = 0;
  while (at < raw.length) {
    const end = raw.indexOf('\r\n\r\n', at);
    if (end < 0) throw new Error(`truncated response: ${raw.subarray(at).toString('latin1')}`);
    const [statusLine = '', ...lines] = raw.subarray(at, end).toString('latin1').split('\r\n');
    const status = Number(statusLine.split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    at = end + 4;
    if (status < 200) {
      responses.push({ status, headers, body: '' });
      continue;
    }
    expect(headers['transfer-encoding']).toBeUndefined();
    const length = heads[final] === true ? 0 : Number(headers['content-length'] ?? '0');
    responses.push({ status, headers, body: raw.subarray(at, at + length).toString('latin1') });
    at += length;
    final += 1;
  }
  return responses;
}

// ---- the rows --------------------------------------------------------------

/** What a client must get: an answer from the upstream to its own request, or a refusal. */
type ClientGets =
  | { status: 100; head?: undefined }
  | { status: 200; user: User; head?: boolean }
  /** `head`: the gateway answered the HEAD, so without a body (Node's parser answers before it knows the method). */
  | Refusal;
type Refusal =
  | { status: 400; error: 'invalid_request'; head?: boolean }
  | { status: 501; error: 'not_implemented'; head?: boolean };

type Framing = 'none' | 'length' | 'chunked';

/** What the upstream must parse. */
interface UpstreamParses {
  method: string;
  url: string;
  user: User;
  body: string;
  framing: Framing;
  trailers?: NodeJS.Dict<string>;
}

interface Row {
  name: string;
  /** One connection after the other. */
  connections: { bytes: () => string; gets: ClientGets[] }[];
  parses: UpstreamParses[];
}

const OK = (user: User = 'alice'): ClientGets => ({ status: 200, user });
const REFUSED: Refusal = { status: 400, error: 'invalid_request' };
/** A transfer coding the gateway does not implement (RFC 9112 §6.1). */
const NOT_IMPLEMENTED: Refusal = { status: 501, error: 'not_implemented' };

/**
 * Headers the upstream must never see from a client, in any spelling: the
 * ones other auth proxies, CDNs and balancers assert (class 7), framing
 * spelled with `_`, and the hop-by-hop ones.
 */
const HOSTILE = [
  'X-Forwarded-User: evil',
  'x_forwarded_email: evil@example.com',
  'X-Forwarded-Preferred-Username: evil',
  'X-Forwarded-Groups: admins',
  'X-Auth-Request-User: evil',
  'X-AUTH-REQUEST-EMAIL: evil@example.com',
  'X-Auth-Request-Groups: admins',
  'X-Auth-Request-Preferred-Username: evil',
  'Remote-User: evil',
  'Remote_User: evil',
  'X-Remote-User: evil',
  'X-Authenticated-User: evil',
  'True-Client-IP: 198.51.100.66',
  'X-Client-IP: 198.51.100.66',
  'Client-IP: 198.51.100.66',
  'X-Cluster-Client-IP: 198.51.100.66',
  'CF-Connecting-IP: 198.51.100.66',
  'Fastly-Client-IP: 198.51.100.66',
  'X-Original-Forwarded-For: 198.51.100.66',
  'X-Remote-Addr: 198.51.100.66',
  'X-Original-Host: evil.example',
  'X-Host: evil.example',
  'X-Forwarded-Ssl: on',
  'X-Forwarded-Scheme: https',
  'X-Forwarded-Server: evil.example',
  'Front-End-Https: on',
  'X-User-Id: evil',
  // The token's own tenant: another one would be a tenant mismatch (403) in this spelling too.
  'x_tenant_id: acme',
  'X_User_Email: evil@example.com',
  'Content_Length: 50',
  'Transfer_Encoding: chunked',
  // Runs of delimiters, which normalisers collapse (aws/http-desync-guardian's ambiguous names).
  'Content__Length: 50',
  'Transfer---Encoding: chunked',
  'X--User--Id: evil',
  'x-_user-_email: evil@example.com',
  // The token's own tenant, as above.
  'X__Tenant__Id: acme',
  'TE: trailers',
  'Trailer: X-User-Id',
  'Keep-Alive: timeout=5',
  'Proxy-Connection: keep-alive',
];
const HOSTILE_NAMES = new Set(
  HOSTILE.map((line) => foldHeaderName(line.slice(0, line.indexOf(':')))).filter(
    // The gateway sets these itself; that the values are its own is checked
    // by name, and the `_` spellings by the check for `_` in any name.
    (name) =>
      !['x-user-id', 'x-tenant-id', 'x-user-email', 'content-length', 'transfer-encoding'].includes(
        name,
      ),
  ),
);

/** Headers the gateway sets on every forwarded request. */
const GATEWAY_SET = [
  'x-user-id',
  'x-user-email',
  'x-tenant-id',
  'x-tenant-type',
  'content-length',
  'transfer-encoding',
];

const METHODS = ['GET', 'HEAD', 'DELETE', 'OPTIONS', 'POST', 'PUT', 'PATCH'];
/** Node's client sends `Content-Length: 0` for these when there is no body (RFC 9110 §8.6). */
const BODY_BY_DEFAULT = new Set(['POST', 'PUT', 'PATCH']);

let rowNumber = 0;
/** A path no other row uses. */
const path = (what: string) => `/orders/${++rowNumber}-${what}`;

function methodRows(method: string): Row[] {
  const got = (user: User = 'alice'): ClientGets =>
    method === 'HEAD' ? { status: 200, user, head: true } : OK(user);
  const m = method.toLowerCase();
  const rows: Row[] = [];
  const accepted = (name: string, lines: string[], body: string, framing: Framing) => {
    const url = path(`${m}-${framing}`);
    const sent = framing === 'chunked' ? chunked(body) : body;
    rows.push({
      name: `${method} ${name}`,
      connections: [{ bytes: () => head(method, url, 'alice', lines) + sent, gets: [got()] }],
      parses: [{ method, url, user: 'alice', body, framing }],
    });
  };
  const refused = (
    name: string,
    lines: string[],
    body: string,
    byParser = false,
    answer: Refusal = REFUSED,
  ) => {
    const url = path(`${m}-refused`);
    rows.push({
      name: `${method} ${name}`,
      connections: [
        {
          bytes: () => head(method, url, 'alice', lines) + body,
          // The answer to a HEAD has no body, a refusal's neither.
          gets: [method === 'HEAD' && !byParser ? { ...answer, head: true } : answer],
        },
      ],
      parses: [],
    });
  };
  accepted('without a body', [], '', 'none');
  accepted('with Content-Length', [`Content-Length: ${SMUGGLED.length}`], SMUGGLED, 'length');
  accepted('chunked', ['Transfer-Encoding: chunked'], SMUGGLED, 'chunked');
  accepted('chunked, spelled CHUNKED', ['Transfer-Encoding: CHUNKED'], SMUGGLED, 'chunked');
  refused(
    'with Content-Length and Transfer-Encoding',
    [`Content-Length: ${SMUGGLED.length}`, 'Transfer-Encoding: chunked'],
    chunked(SMUGGLED),
    true,
  );
  refused(
    'with two equal Content-Length',
    [`Content-Length: ${SMUGGLED.length}`, `Content-Length: ${SMUGGLED.length}`],
    SMUGGLED,
    true,
  );
  refused(
    'with two different Content-Length',
    ['Content-Length: 0', `Content-Length: ${SMUGGLED.length}`],
    SMUGGLED,
    true,
  );
  refused(
    'with Transfer-Encoding: gzip, chunked',
    ['Transfer-Encoding: gzip, chunked'],
    chunked(SMUGGLED),
    false,
    NOT_IMPLEMENTED,
  );
  refused(
    'with Transfer-Encoding: chunked;x=1',
    ['Transfer-Encoding: chunked;x=1'],
    chunked(SMUGGLED),
  );
  refused(
    'with Transfer-Encoding: chunked, identity',
    ['Transfer-Encoding: chunked, identity'],
    chunked(SMUGGLED),
    true,
  );
  refused('with Transfer-Encoding: xchunked', ['Transfer-Encoding: xchunked'], chunked(SMUGGLED));
  refused(
    'naming Content-Length in Connection',
    ['Connection: content-length', `Content-Length: ${SMUGGLED.length}`],
    SMUGGLED,
  );
  refused(
    'naming Transfer-Encoding in Connection',
    ['Connection: Transfer-Encoding', 'Transfer-Encoding: chunked'],
    chunked(SMUGGLED),
  );
  return rows;
}

/** A POST whose Connection names `names`: refused, nothing reaches the upstream. */
function connectionRow(names: string[], method = 'POST'): Row {
  const url = path('connection');
  return {
    name: `${method} with ${names.map((n) => `Connection: ${n}`).join(' + ')}`,
    connections: [
      {
        bytes: () =>
          head(method, url, 'alice', [
            ...names.map((n) => `Connection: ${n}`),
            `Content-Length: ${SMUGGLED.length}`,
          ]) + SMUGGLED,
        gets: [REFUSED],
      },
    ],
    parses: [],
  };
}

function pipelineRows(): Row[] {
  const a = path('pipelined-alice');
  const b = path('pipelined-bob');
  const c = path('pipelined-alice-delete');
  const d = path('pipelined-bob');
  const e = path('pipelined-refused');
  const f = path('pipelined-never');
  const g = path('pipelined-alice-post');
  const h = path('pipelined-bob');
  return [
    {
      name: 'two GETs in one write, the second with another token',
      connections: [
        {
          bytes: () => head('GET', a, 'alice', [], false) + head('GET', b, 'bob'),
          gets: [OK('alice'), OK('bob')],
        },
      ],
      parses: [
        { method: 'GET', url: a, user: 'alice', body: '', framing: 'none' },
        { method: 'GET', url: b, user: 'bob', body: '', framing: 'none' },
      ],
    },
    {
      name: 'a chunked DELETE hiding a request, then another token’s GET, in one write',
      connections: [
        {
          bytes: () =>
            head('DELETE', c, 'alice', ['Transfer-Encoding: chunked'], false) +
            chunked(SMUGGLED) +
            head('GET', d, 'bob'),
          gets: [OK('alice'), OK('bob')],
        },
      ],
      parses: [
        { method: 'DELETE', url: c, user: 'alice', body: SMUGGLED, framing: 'chunked' },
        { method: 'GET', url: d, user: 'bob', body: '', framing: 'none' },
      ],
    },
    {
      name: 'a chunked POST hiding a request, then another token’s GET, in one write',
      connections: [
        {
          bytes: () =>
            head('POST', g, 'alice', ['Transfer-Encoding: chunked'], false) +
            chunked(SMUGGLED) +
            head('GET', h, 'bob'),
          gets: [OK('alice'), OK('bob')],
        },
      ],
      parses: [
        { method: 'POST', url: g, user: 'alice', body: SMUGGLED, framing: 'chunked' },
        { method: 'GET', url: h, user: 'bob', body: '', framing: 'none' },
      ],
    },
    {
      name: 'a Connection trick, then another token’s GET, in one write: refused and closed',
      connections: [
        {
          bytes: () =>
            head(
              'GET',
              e,
              'alice',
              ['Connection: Content-Length', `Content-Length: ${SMUGGLED.length}`],
              false,
            ) +
            SMUGGLED +
            head('GET', f, 'bob'),
          gets: [REFUSED],
        },
      ],
      parses: [],
    },
  ];
}

/** An attempt by alice, then bob on a new connection: the pooled upstream connection is reused. */
function reuseRow(
  name: string,
  attempt: (url: string) => string,
  accepted: UpstreamParses | undefined,
): Row {
  const a = path('reuse-alice');
  const b = path('reuse-bob');
  return {
    name: `${name}, then another user on the pooled connection`,
    connections: [
      { bytes: () => attempt(a), gets: [accepted === undefined ? REFUSED : OK('alice')] },
      { bytes: () => head('GET', b, 'bob'), gets: [OK('bob')] },
    ],
    parses: [
      ...(accepted === undefined ? [] : [{ ...accepted, url: a }]),
      { method: 'GET', url: b, user: 'bob', body: '', framing: 'none' },
    ],
  };
}

function otherRows(): Row[] {
  const hostile = path('hostile-headers');
  const expect100 = path('expect');
  const trailer = path('trailer');
  const hop = path('hop');
  return [
    {
      name: 'identity-like, hop-by-hop and `_`-spelled headers',
      connections: [{ bytes: () => head('GET', hostile, 'alice', HOSTILE), gets: [OK()] }],
      parses: [{ method: 'GET', url: hostile, user: 'alice', body: '', framing: 'none' }],
    },
    {
      // RFC 9113 §3.1: the h2c upgrade is deprecated; the gateway refuses it outright (issue 47)
      // rather than strip it, so no upstream ever sees it (test/http/http2-cleartext.test.ts too).
      name: 'Upgrade: h2c, refused 400 and never parsed upstream',
      connections: [
        {
          bytes: () => head('GET', hop, 'alice', ['Upgrade: h2c']),
          gets: [{ status: 400, error: 'invalid_request' }],
        },
      ],
      parses: [],
    },
    {
      name: 'a header the client names in Connection (not a protected one)',
      connections: [
        {
          bytes: () => head('GET', hop, 'alice', ['Connection: X-Secret-Hop', 'X-Secret-Hop: 1']),
          gets: [OK()],
        },
      ],
      parses: [{ method: 'GET', url: hop, user: 'alice', body: '', framing: 'none' }],
    },
    {
      name: 'Expect: 100-continue',
      connections: [
        {
          bytes: () =>
            head('POST', expect100, 'alice', [
              'Expect: 100-continue',
              `Content-Length: ${SMUGGLED.length}`,
            ]) + SMUGGLED,
          gets: [{ status: 100 }, OK()],
        },
      ],
      parses: [
        { method: 'POST', url: expect100, user: 'alice', body: SMUGGLED, framing: 'length' },
      ],
    },
    {
      name: 'a chunked body whose trailer names a user',
      connections: [
        {
          bytes: () =>
            head('POST', trailer, 'alice', ['Transfer-Encoding: chunked', 'Trailer: X-User-Id']) +
            chunked('abc', 'X-User-Id: evil\r\n'),
          gets: [OK()],
        },
      ],
      parses: [
        {
          method: 'POST',
          url: trailer,
          user: 'alice',
          body: 'abc',
          framing: 'chunked',
          trailers: {},
        },
      ],
    },
  ];
}

const ROWS: Row[] = [
  ...METHODS.flatMap(methodRows),
  ...[
    ['content-length'],
    ['Content-Length'],
    ['keep-alive, CONTENT-LENGTH'],
    ['keep-alive', 'content-length'],
    ['transfer-encoding'],
    ['host'],
    ['x-tenant-id'],
    ['X-User-Id'],
    ['X_USER_EMAIL'],
    ['x-tenant-type'],
    ['x-request-id'],
    ['x-forwarded-for'],
    ['X-Forwarded-Host'],
    ['x-forwarded-proto'],
  ].map((names) => connectionRow(names)),
  connectionRow(['Content-Length'], 'GET'),
  connectionRow(['x-user-id'], 'DELETE'),
  ...pipelineRows(),
  reuseRow(
    'a chunked DELETE hiding a request',
    (url) => head('DELETE', url, 'alice', ['Transfer-Encoding: chunked']) + chunked(SMUGGLED),
    { method: 'DELETE', url: '', user: 'alice', body: SMUGGLED, framing: 'chunked' },
  ),
  reuseRow(
    'a chunked OPTIONS hiding a request',
    (url) => head('OPTIONS', url, 'alice', ['Transfer-Encoding: chunked']) + chunked(SMUGGLED),
    { method: 'OPTIONS', url: '', user: 'alice', body: SMUGGLED, framing: 'chunked' },
  ),
  reuseRow(
    'a GET with a body hiding a request',
    (url) => head('GET', url, 'alice', [`Content-Length: ${SMUGGLED.length}`]) + SMUGGLED,
    { method: 'GET', url: '', user: 'alice', body: SMUGGLED, framing: 'length' },
  ),
  reuseRow(
    'a GET whose Connection strips its Content-Length',
    (url) =>
      head('GET', url, 'alice', [
        'Connection: content-length',
        `Content-Length: ${SMUGGLED.length}`,
      ]) + SMUGGLED,
    undefined,
  ),
  reuseRow(
    'a POST whose Connection strips its Transfer-Encoding',
    (url) =>
      head('POST', url, 'alice', ['Connection: transfer-encoding', 'Transfer-Encoding: chunked']) +
      chunked(SMUGGLED),
    undefined,
  ),
  ...otherRows(),
];

/** The expected upstream view of one request, against what it parsed. */
function expectParsed(got: ParsedRequest | undefined, want: UpstreamParses): void {
  expect(got).toBeDefined();
  if (got === undefined) return;
  const who = users[want.user];
  expect({ method: got.method, url: got.url, body: got.body }).toEqual({
    method: want.method,
    url: want.url,
    body: want.body,
  });
  // Only the gateway's identity, once each.
  expect(got.headers['x-user-id']).toBe(who.userId);
  expect(got.headers['x-user-email']).toBe(who.email);
  expect(got.headers['x-tenant-id']).toBe(who.tenantId);
  expect(got.headers['x-tenant-type']).toBe('orgtenant');
  for (const name of Object.keys(got.headers)) {
    expect(name).not.toContain('_');
    expect(HOSTILE_NAMES.has(foldHeaderName(name)), name).toBe(false);
    // What the gateway sets, only in its own spelling: no name that collapses to one.
    const collapsed = name.replace(/-+/g, '-');
    if (GATEWAY_SET.includes(collapsed)) expect(name).toBe(collapsed);
  }
  // The gateway's framing, nothing else.
  const { 'content-length': length, 'transfer-encoding': encoding } = got.headers;
  if (want.framing === 'chunked')
    expect({ length, encoding }).toEqual({ length: undefined, encoding: 'chunked' });
  if (want.framing === 'length')
    expect({ length, encoding }).toEqual({ length: String(want.body.length), encoding: undefined });
  if (want.framing === 'none')
    expect({ length, encoding }).toEqual({
      length: BODY_BY_DEFAULT.has(want.method) ? '0' : undefined,
      encoding: undefined,
    });
  if (want.trailers !== undefined) expect(got.trailers).toEqual(want.trailers);
}

function expectAnswer(got: RawResponse | undefined, want: ClientGets): void {
  expect(got?.status).toBe(want.status);
  if (got === undefined) return;
  // Never the answer to a request nobody made.
  expect(got.headers['x-stray']).toBeUndefined();
  if (want.status === 400 || want.status === 501) {
    if (want.head !== true) expect(JSON.parse(got.body)).toMatchObject({ error: want.error });
    return;
  }
  if (want.status !== 200 || want.head === true) return;
  // The upstream's answer names the request it answers: it must be this client's.
  const answered = JSON.parse(got.body) as ParsedRequest;
  expect(answered.headers['x-user-id']).toBe(users[want.user].userId);
  expect(answered.headers['x-tenant-id']).toBe(users[want.user].tenantId);
}

describe('framing: the upstream parses exactly the requests the gateway accepted', () => {
  let expectedTotal = 0;

  it.each(ROWS.map((row) => [row.name, row] as const))('%s', async (_name, row) => {
    const before = upstream.requests.length;
    for (const connection of row.connections) {
      const heads = connection.gets.filter((g) => g.status !== 100).map((g) => g.head === true);
      const answers = await exchange(connection.bytes(), heads);
      expect(answers.map((a) => a.status)).toEqual(connection.gets.map((g) => g.status));
      connection.gets.forEach((want, i) => expectAnswer(answers[i], want));
    }
    expectedTotal += row.parses.length;
    // Every answer is in: what the upstream parsed for this row is all there is.
    expect(upstream.requests.slice(before).map((r) => `${r.method} ${r.url}`)).toEqual(
      row.parses.map((p) => `${p.method} ${p.url}`),
    );
    row.parses.forEach((want, i) => expectParsed(upstream.requests[before + i], want));
  });

  it('never let the upstream parse a request hidden in a body', () => {
    expect(upstream.requests.filter((r) => r.url.includes('smuggled'))).toEqual([]);
    expect(upstream.requests.filter((r) => r.headers['x-user-id'] === 'evil')).toEqual([]);
    expect(upstream.requests.length).toBe(expectedTotal);
  });
});

describe('upstream connections that carry more than the answer', () => {
  const strayGet = (user: User, path: string, misbehave?: string) =>
    exchange(head('GET', path, user, misbehave === undefined ? [] : [`X-Misbehave: ${misbehave}`]));

  async function expectOwnAnswer(
    user: User,
    path: string,
    misbehave?: string,
  ): Promise<ParsedRequest> {
    const [answer, ...more] = await strayGet(user, path, misbehave);
    expect(more).toEqual([]);
    expect(answer?.status).toBe(200);
    expect(answer?.body).not.toBe(STRAY_BODY);
    const answered = JSON.parse(answer?.body ?? '{}') as ParsedRequest;
    expect(answered.url).toBe(path);
    expect(answered.headers['x-user-id']).toBe(users[user].userId);
    return answered;
  }

  it('closes a pooled connection that receives a response while idle', async () => {
    const alice = await expectOwnAnswer('alice', '/stray/idle-alice', 'idle');
    stray.sendStray();
    // The gateway closes it: the upstream sees its connection go.
    await waitFor(() => stray.connections.closedIds.includes(alice.connection), 3000);
    const bob = await expectOwnAnswer('bob', '/stray/idle-bob');
    expect(bob.connection).not.toBe(alice.connection);
  });

  it('closes a pooled connection whose request got two responses', async () => {
    const alice = await expectOwnAnswer('alice', '/stray/double-alice', 'double');
    await waitFor(() => stray.connections.closedIds.includes(alice.connection), 3000);
    const bob = await expectOwnAnswer('bob', '/stray/double-bob');
    expect(bob.connection).not.toBe(alice.connection);
  });

  it('keeps reusing a connection whose exchanges ended cleanly', async () => {
    const first = await expectOwnAnswer('alice', '/stray/clean-1');
    const second = await expectOwnAnswer('bob', '/stray/clean-2');
    expect(second.connection).toBe(first.connection);
  });
});

describe('upgrades and forward-auth', () => {
  const upgrade = (lines: string[]) =>
    head(
      'GET',
      '/live/socket',
      'alice',
      [
        'Upgrade: websocket',
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
        'Sec-WebSocket-Version: 13',
        ...lines,
      ],
      false,
    );

  /** Sends an upgrade and resolves with the status line and head of the answer. */
  function upgradeHead(bytes: string): Promise<string> {
    return new Promise((resolve) => {
      const socket = connect(Number(gatewayUrl.port), gatewayUrl.hostname);
      let got = '';
      socket.setTimeout(5000, () => socket.destroy());
      socket.on('connect', () => socket.write(bytes));
      socket.on('data', (chunk: Buffer) => {
        got += chunk.toString('latin1');
        if (got.includes('\r\n\r\n')) socket.destroy();
      });
      socket.on('error', () => {});
      socket.on('close', () => resolve(got));
    });
  }

  it('forwards a clean Connection: upgrade and Upgrade: websocket, nothing the client named', async () => {
    const before = s.up.live.upgrades.length;
    const answer = await upgradeHead(
      upgrade([
        'Connection: Upgrade, X-Secret-Hop',
        'X-Secret-Hop: 1',
        'X-Forwarded-User: evil',
        'X_Auth_Request_Email: evil@example.com',
      ]),
    );
    expect(answer).toMatch(/^HTTP\/1\.1 101 /);
    const seen = s.up.live.upgrades[before];
    expect(seen?.connection).toBe('upgrade');
    expect(seen?.upgrade).toBe('websocket');
    expect(seen?.['x-secret-hop']).toBeUndefined();
    expect(seen?.['x-forwarded-user']).toBeUndefined();
    expect(seen?.['x_auth_request_email']).toBeUndefined();
    expect(seen?.['x-user-id']).toBe(users.alice.userId);
  });

  it('refuses an upgrade whose Connection names an identity header', async () => {
    const before = s.up.live.upgrades.length;
    const answer = await upgradeHead(upgrade(['Connection: Upgrade, X-Tenant-Id']));
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer.slice(answer.indexOf('\r\n\r\n'))).toContain('invalid_request');
    expect(s.up.live.upgrades.length).toBe(before);
  });

  it('refuses a forward-auth request whose Connection names an identity header', async () => {
    const [answer] = await exchange(
      head('GET', '/auth/verify', 'alice', ['Connection: x-user-id', 'X-Original-URI: /orders/1']),
    );
    expect(answer?.status).toBe(400);
    expect(JSON.parse(answer?.body ?? '{}')).toMatchObject({ error: 'invalid_request' });
  });
});

describe('config stripHeaders', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      ...s.fx.config,
      routes: [{ prefix: '/orders', upstream: upstream.url }],
      stripHeaders: { add: ['X-Internal-*', 'X-Debug-User'], keep: ['true_client_ip'] },
    });
  });
  afterAll(() => gw.close());

  it('strips the added names and lets the kept ones through, in any spelling', async () => {
    // A store of its own: a token of this gateway.
    const token = (await tokenFor(gw.url, ALICE, 'acme')).access_token;
    const before = upstream.requests.length;
    const res = await fetch(`${gw.url}/orders/strip-config`, {
      headers: {
        authorization: `Bearer ${token}`,
        'x-internal-secret': '1',
        X_Internal_Other: '1',
        'x-debug-user': 'evil',
        'true-client-ip': '198.51.100.7',
        'x-client-ip': '198.51.100.66',
      },
    });
    expect(res.status).toBe(200);
    const seen = upstream.requests[before]?.headers ?? {};
    expect(seen['true-client-ip']).toBe('198.51.100.7');
    expect(Object.keys(seen).filter((n) => /internal|debug|x-client-ip/i.test(n))).toEqual([]);
  });

  it('is validated with key paths; unknown keys stay errors', () => {
    const problems = (raw: Record<string, unknown>): string[] => {
      try {
        validateConfig(raw, process.cwd(), 'test');
      } catch (err) {
        return (err as ConfigError).problems;
      }
      throw new Error('the config was accepted');
    };
    expect(problems({ stripHeaders: { keep: ['X-Tenant-Id'] } })).toEqual([
      expect.stringMatching(/^stripHeaders\.keep\[0\]: is not stripped by default/),
    ]);
    expect(problems({ stripHeaders: { add: ['bad header'] } })).toEqual([
      expect.stringMatching(/^stripHeaders\.add\[0\]: must be an HTTP header name/),
    ]);
    expect(problems({ stripHeaders: { remove: ['X-Foo'] } })).toEqual([
      expect.stringMatching(/^stripHeaders\.remove: unknown key/),
    ]);
  });
});
