/**
 * HTTP/2 requests from Node's own client (`node:http2`), for answers a
 * well-behaved client gets: h2c by prior knowledge for `http://`, h2 by
 * ALPN for `https://` (`ca` trusted). Malformed frames need the raw client
 * (`raw-http2.ts`).
 */
import {
  connect,
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type IncomingHttpHeaders,
} from 'node:http2';

export interface Http2Answer {
  status: number;
  /** The response's fields, pseudo-header fields removed. */
  headers: Record<string, string | string[]>;
  body: string;
}

/** One connection; closed by the caller. */
export function http2Session(url: string, ca?: string | Buffer): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = connect(url, ca === undefined ? {} : { ca, servername: 'localhost' });
    session.once('connect', () => {
      session.off('error', reject);
      resolve(session);
    });
    session.once('error', reject);
  });
}

/** A request on `session`: `path`, extra fields (`:method` among them), and a body. */
export function http2Request(
  session: ClientHttp2Session,
  path: string,
  headers: Record<string, string | string[]> = {},
  body?: string | Buffer,
): Promise<Http2Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request(
      { ':path': path, ...headers },
      { endStream: body === undefined },
    );
    let status = 0;
    let fields: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on('response', (h) => {
      status = Number(h[':status']);
      fields = h;
    });
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () =>
      resolve({ status, headers: withoutPseudo(fields), body: Buffer.concat(chunks).toString() }),
    );
    stream.on('error', reject);
    if (body !== undefined) stream.end(body);
  });
}

/** One request on a connection of its own. */
export async function http2Get(
  url: string,
  path: string,
  headers: Record<string, string | string[]> = {},
  ca?: string | Buffer,
): Promise<Http2Answer> {
  const session = await http2Session(url, ca);
  try {
    return await http2Request(session, path, headers);
  } finally {
    session.close();
  }
}

function withoutPseudo(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers))
    if (!name.startsWith(':') && value !== undefined) out[name] = value as string | string[];
  return out;
}

/**
 * Sends, as the request's trailers (asked for with `waitForTrailers`), the
 * identity and credential fields a client would spoof: none may reach an upstream.
 */
export function sendSpoofedTrailers(stream: ClientHttp2Stream): void {
  stream.on('wantTrailers', () =>
    stream.sendTrailers({
      'x-user-id': 'mallory',
      'x-tenant-id': 'globex',
      authorization: 'Bearer forged',
    }),
  );
}
