/**
 * A request with a Host line the test chooses (fetch would not let it): for
 * the suites that check what the gateway makes of a client's Host (issue 42,
 * `publicUrl`), and the OpenAPI suites' bodyless requests.
 */
import { request, type IncomingHttpHeaders } from 'node:http';

export interface HostAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A GET of `path` at `base` with `host` as the Host line, as a client chose it. */
export async function getWithHost(base: string, path: string, host: string): Promise<HostAnswer> {
  const { status, headers, body } = await withHost(base, 'GET', path, host);
  return { status, headers, body: body.toString('utf8') };
}

/** A bodyless request with `host` as the Host line, answered as a fetch `Response`. */
export async function fetchWithHost(
  base: string,
  method: string,
  path: string,
  host: string,
): Promise<Response> {
  const { status, headers: raw, body } = await withHost(base, method, path, host);
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw))
    for (const one of [value ?? []].flat()) headers.append(name, one);
  return new Response(body, { status, headers });
}

function withHost(
  base: string,
  method: string,
  path: string,
  host: string,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ method, hostname, port, path, headers: { host } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}
