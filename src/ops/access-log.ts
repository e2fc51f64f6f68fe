/**
 * The access log: one line per request, written from its outcome record
 * (`outcome.ts`) when the response closes. Its fields are a fixed list that
 * holds no secret by construction — no header but the user agent, the path
 * without its query (a query may carry credentials), ids, sizes, times, an
 * error CODE — so it needs neither pino's redaction walk (two thirds of a
 * line's cost when it ran) nor its serializer (6.8 µs per request under the
 * profiler, more than the gateway's own files together): the line is built
 * from the fixed fields directly and written to the process log's
 * destination, with the `level`, `time` and bindings of pino's lines.
 */
import { Buffer } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import pino, { type Logger } from 'pino';
import { lineSafe } from '../text/line-safe.js';
import type { Settled } from './outcome.js';
import type { RequestScope } from '../http/scope.js';

/** The request the ingress asked about, for a forward-auth line. */
export interface OriginalRequest {
  method: string | undefined;
  host: string | undefined;
  uri: string | undefined;
}

export interface AccessLine {
  req: IncomingMessage;
  /** The request's URL as it arrived (the dispatcher rewrites `req.url` for the upstream). */
  url: string | undefined;
  scope: RequestScope;
  settled: Settled;
  durationMs: number;
  bytesIn: number;
  bytesOut: number;
  /** The client as the trusted-proxy rules resolve it. */
  clientIp: string;
  original: OriginalRequest | undefined;
  /**
   * The line's `msg`: `request`, or for a WebSocket upgrade `upgrade`
   * (accepted) and `upgrade refused` (refused or failed). Default `request`.
   */
  msg?: 'request' | 'upgrade' | 'upgrade refused' | undefined;
}

export interface AccessLog {
  /** Whether a line at this level would be written: build nothing otherwise. */
  enabled(level: 'info' | 'debug'): boolean;
  write(level: 'info' | 'debug', line: AccessLine): void;
}

/**
 * Each field's `,"name":` (`K`) and, for the values written between quotes
 * as they are, `,"name":"` (`Q`), made once: a line is ~20 fields, and each
 * string add of building one costs, then the flattening of the result (issue 35).
 */
const K = prefixes(
  [
    'path',
    'route',
    'status',
    'durationMs',
    'upstreamMs',
    'upstreamStatus',
    'tenantId',
    'userId',
    'clientIp',
    'userAgent',
    'bytesIn',
    'bytesOut',
    'requestedTenant',
    'method',
    'host',
    'uri',
  ],
  '',
);
const Q = prefixes(['requestId', 'traceId', 'method', 'outcome', 'reason', 'tokenRefusal'], '"');

function prefixes<Name extends string>(names: readonly Name[], open: string): Record<Name, string> {
  return Object.fromEntries(names.map((name) => [name, `,"${name}":${open}`])) as Record<
    Name,
    string
  >;
}

/** Longer user agents are cut: a client must not choose the size of our lines. */
const MAX_USER_AGENT = 256;

export function createAccessLog(log: Logger): AccessLog {
  const out = lineWriter(log);
  return {
    enabled: (level) => log.isLevelEnabled(level),
    write(level, line) {
      const { req, url, scope, settled, durationMs, bytesIn, bytesOut, clientIp, original } = line;
      const agent = req.headers['user-agent'];
      out(
        LEVELS[level],
        line.msg ?? 'request',
        made(Q.requestId, scope.requestId) +
          made(Q.traceId, scope.trace?.traceId) +
          made(Q.method, req.method) +
          // Node's parser admits only printable ASCII in the request target (a
          // raw byte of 0x7F or over is a 400 before any handler runs).
          text(K.path, pathOf(url)) +
          known(K.route, scope.route) +
          num(K.status, settled.status) +
          made(Q.outcome, settled.outcome) +
          made(Q.reason, settled.reason === '' ? undefined : settled.reason) +
          refusalText(settled) +
          milliseconds(K.durationMs, durationMs) +
          milliseconds(K.upstreamMs, scope.upstreamMs) +
          num(K.upstreamStatus, scope.upstreamStatus) +
          known(K.tenantId, scope.tenantId) +
          known(K.userId, scope.userId) +
          headerText(K.clientIp, clientIp) +
          headerText(
            K.userAgent,
            agent === undefined ? undefined : agent.slice(0, MAX_USER_AGENT),
          ) +
          num(K.bytesIn, bytesIn) +
          num(K.bytesOut, bytesOut) +
          originalOf(original),
      );
    },
  };
}

/** pino's numbers for the two levels access lines are written at. */
const LEVELS = { info: 30, debug: 20 } as const;

type Destination = { write(line: string): unknown };

/**
 * Writes a line as pino would — `level`, `time`, the logger's bindings
 * (`"service":…`), the fields, `"msg"` — to the logger's own
 * destination (the batched standard output, a test's stream, or
 * pino-pretty's worker, which reads JSON lines).
 */
function lineWriter(log: Logger): (level: number, msg: string, fields: string) => void {
  const internals = log as unknown as Record<symbol, unknown>;
  const destination = internals[pino.symbols.streamSym] as Destination;
  const bindings = internals[pino.symbols.chindingsSym] as string;
  const starts = new Map<number, string>();
  const ends = new Map<string, string>();
  return (level, msg, fields) => {
    let start = starts.get(level);
    if (start === undefined) starts.set(level, (start = `{"level":${level},"time":`));
    let end = ends.get(msg);
    if (end === undefined) ends.set(msg, (end = `,"msg":"${msg}"}\n`));
    destination.write(start + epochMillisText(Date.now()) + bindings + fields + end);
  };
}

/** `000` … `999`. */
const MILLIS = Array.from({ length: 1000 }, (_, ms) => String(ms).padStart(3, '0'));
let lastSecond = -1;
let lastSecondText = '';

/**
 * `Date.now()` as JavaScript writes it, from the second's digits (made once
 * a second) and the milliseconds' (a table): the number itself is too large
 * for V8's small integers, and its conversion took ~1.5k instructions a line
 * (issue 35).
 */
export function epochMillisText(now: number): string {
  if (!Number.isSafeInteger(now) || now < 1000) return String(now);
  const second = Math.floor(now / 1000);
  if (second !== lastSecond) {
    lastSecond = second;
    lastSecondText = String(second);
  }
  return lastSecondText + (MILLIS[now - second * 1000] as string);
}

/** The field (its `,"name":` prefix, `K`) and the value escaped as JSON; nothing for undefined. */
function text(field: string, value: string | undefined): string {
  return value === undefined ? '' : field + JSON.stringify(value);
}

/**
 * {@link text} for a value that holds no character JSON escapes, by how it
 * was made: a request id (a UUID, or the client's only when it matched
 * `[A-Za-z0-9._:-]{1,128}`, `request-id.ts`), a trace id (hex), a method
 * (Node's parser admits only known methods, all letters), an outcome,
 * reason or refusal CODE (the gateway's own words). Written as it is, after
 * its field's `,"name":"` (`Q`): `JSON.stringify` costs ~0.5k instructions a
 * call (issue 35).
 */
function made(field: string, value: string | undefined): string {
  return value === undefined ? '' : field + value + '"';
}

/** Values seen again and again — a route's label, a tenant, a user — with their JSON, bounded. */
const JSON_OF = new Map<string, string>();
const JSON_OF_MAX = 10_000;
/** Longer values are not kept: ids and labels are short. */
const JSON_OF_LONGEST = 128;

/**
 * {@link text} for values that repeat from request to request (a route's
 * label, a tenant or user id from a verified credential): their JSON made
 * once and looked up by the string, which is one object for as long as its
 * token or route is cached, so the lookup reuses its hash.
 */
function known(field: string, value: string | undefined): string {
  if (value === undefined) return '';
  let json = JSON_OF.get(value);
  if (json === undefined) {
    json = JSON.stringify(value);
    if (JSON_OF.size < JSON_OF_MAX && value.length <= JSON_OF_LONGEST) JSON_OF.set(value, json);
  }
  return field + json;
}

/**
 * {@link text} for a value a client chose (a tenant it named, decoded from a
 * path or query: anything): with DEL, the C1 controls and U+2028/U+2029
 * escaped too (`line-safe.ts`), so that it can neither split the line nor act
 * on a terminal. Only the fields a client chooses are scanned, not the whole
 * line (the rest are ids, codes, numbers and labels the gateway made or
 * checked): this is the proxy's hot path.
 */
function clientText(field: string, value: string | undefined): string {
  return value === undefined ? '' : field + lineSafe(JSON.stringify(value));
}

/**
 * {@link clientText} for a header value (user agent, forwarded address, the
 * original request of forward-auth). Node's parser admits in one only tab,
 * printable ASCII and 0x80–0xFF, read as U+0080–U+00FF: the only characters
 * to escape are the C1 controls, none of them ASCII. So a value whose UTF-8
 * length is its length (all ASCII: every real user agent) is written as it
 * is. Counting that length (a V8 fast call) is what keeps the escaping cheap:
 * a line costs ~0.9k instructions more than without escaping, against ~3.4k
 * when a regular expression scanned these fields and ~8.8k for one scan of
 * the whole line (callgrind, 100,000 lines).
 */
function headerText(field: string, value: string | undefined): string {
  if (value === undefined) return '';
  const json = JSON.stringify(value);
  return field + (Buffer.byteLength(value) === value.length ? json : lineSafe(json));
}

/** What a refusal's error told the log: why a token was refused, the tenant a request named. */
function refusalText(settled: Settled): string {
  if (settled.outcome === 'accepted') return '';
  return (
    made(Q.tokenRefusal, settled.tokenRefusal) +
    clientText(K.requestedTenant, settled.requestedTenant)
  );
}

function num(field: string, value: number | undefined): string {
  return value === undefined ? '' : field + value;
}

function originalOf(original: OriginalRequest | undefined): string {
  if (original === undefined) return '';
  const fields =
    headerText(K.method, original.method) +
    headerText(K.host, original.host) +
    headerText(K.uri, original.uri);
  return `,"original":{${fields.slice(1)}}`;
}

/**
 * The field and `ms` rounded to 1/100 ms, written as JavaScript writes the rounded
 * number (`12.3`, `0.05`, `7`), from integers: a fractional number's
 * shortest-decimal conversion was ~0.8k instructions a field (issue 35).
 */
function milliseconds(field: string, ms: number | undefined): string {
  if (ms === undefined) return '';
  const hundredths = Math.round(ms * 100);
  if (!Number.isSafeInteger(hundredths) || hundredths < 0) return num(field, hundredths / 100);
  const whole = Math.floor(hundredths / 100);
  const cents = hundredths % 100;
  if (cents === 0) return field + whole;
  if (cents % 10 === 0) return `${field}${whole}.${cents / 10}`;
  return `${field}${whole}.${cents < 10 ? '0' : ''}${cents}`;
}

/**
 * The path without the query: never log a query, it may carry credentials.
 * A mailed link's one-time token (issue 45: `/1/email-verifications/{token}`,
 * `/1/password-resets/{token}`, `/1/invitations/{token}[/accept]`) is a
 * credential in the path: written as `…`, in every spelling the identity
 * API routes to that link (any letter case, `//`, dot segments, escapes).
 */
export function pathOf(url: string | undefined): string {
  const raw = url ?? '/';
  const q = raw.indexOf('?');
  const path = q < 0 ? raw : raw.slice(0, q);
  const routed = routedPath(path);
  // A prefix test first: the proxy's hot path pays one comparison.
  const link = routed.startsWith('/1/') ? MAILED_TOKEN.exec(routed) : null;
  return link === null ? path : `${link[1]}…${routed.slice(link[0].length)}`;
}

const MAILED_TOKEN = /^(\/1\/(?:email-verifications|password-resets|invitations)\/)[^/]+/i;
/** What the dispatcher's path normalisation would change: an escape, `//`, a dot segment. */
const UNPLAIN = /%|\/\/|\/\.\.?(?:\/|$)/;

/**
 * `path` as the dispatcher hands it to the identity API (escapes decoded,
 * `//` collapsed, `.` and `..` resolved), for the token test only; the
 * common case, a plain path, is returned as it is.
 */
function routedPath(path: string): string {
  if (!UNPLAIN.test(path)) return path;
  const decoded = path.replace(/%([0-9A-Fa-f]{2})/g, (_escape, hex: string) =>
    String.fromCharCode(parseInt(hex, 16)),
  );
  const segments: string[] = [];
  for (const segment of decoded.split('/')) {
    if (segment === '..') segments.pop();
    else if (segment !== '' && segment !== '.') segments.push(segment);
  }
  return `/${segments.join('/')}`;
}
