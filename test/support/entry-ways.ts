/**
 * The three ways a request enters a gateway and meets the same admission
 * check: proxied, as a WebSocket upgrade, and as forward-auth's
 * `/auth/verify` with `X-Original-URI`. Each way sends a path with headers
 * and answers alike: the status, the error code of the body, the
 * `WWW-Authenticate` challenge, and the log line the gateway wrote for it
 * (`request`, or `upgrade refused`).
 */
import { lineOf } from './log-lines.js';
import type { Line } from './log-sink.js';
import { rawUpgrade } from './raw-upgrade.js';

export interface WayAnswer {
  status: number;
  /** The body's `error`, if the body is JSON. */
  code: unknown;
  challenge: string | null;
  line: Line;
}

export type EntryWay = (path: string, headers: Record<string, string>) => Promise<WayAnswer>;

/** What the ways read when they are called: the gateway's URL and its captured lines. */
export interface WaysTarget {
  gw: { url: string };
  lines: Line[];
}

export interface EntryWays {
  proxied: EntryWay;
  upgrade: EntryWay;
  forwardAuth: EntryWay;
}

function errorCode(body: string): unknown {
  try {
    return (JSON.parse(body) as { error?: unknown }).error;
  } catch {
    return undefined;
  }
}

async function fetched(target: WaysTarget, url: string, headers: Record<string, string>) {
  const res = await fetch(url, { headers });
  return {
    status: res.status,
    code: errorCode(await res.text()),
    challenge: res.headers.get('www-authenticate'),
    line: await lineOf(target.lines, res.headers.get('x-request-id')),
  };
}

export function entryWays(target: WaysTarget): EntryWays {
  return {
    proxied: (path, headers) => fetched(target, `${target.gw.url}${path}`, headers),
    async upgrade(path, headers) {
      const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}`);
      const raw = await rawUpgrade(target.gw.url, path, lines, 'close');
      const [head = '', body = ''] = raw.split('\r\n\r\n');
      const requestId = /^x-request-id: (.*)$/im.exec(head)?.[1] ?? null;
      return {
        status: Number(head.split(' ')[1]),
        code: errorCode(body),
        challenge: /^www-authenticate: (.*)$/im.exec(head)?.[1] ?? null,
        line: await lineOf(target.lines, requestId, 'upgrade refused'),
      };
    },
    forwardAuth: (path, headers) =>
      fetched(target, `${target.gw.url}/auth/verify`, { ...headers, 'x-original-uri': path }),
  };
}
