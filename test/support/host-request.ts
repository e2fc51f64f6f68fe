/**
 * A GET with a Host line the test chooses (fetch would not let it): for the
 * suites that check what the gateway makes of a client's Host (issue 42,
 * `publicUrl`).
 */
import { request } from 'node:http';

export interface HostAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A GET of `path` at `base` with `host` as the Host line, as a client chose it. */
export function getWithHost(base: string, path: string, host: string): Promise<HostAnswer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}
