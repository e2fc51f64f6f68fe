/**
 * The demo's upstream (`demo.echoUpstream`, only when a config asks for it):
 * answers every request with what it received — method, path and headers as
 * JSON — so a newcomer sees what the gateway forwards: the identity headers
 * it injected, the spoofed ones it stripped. Not for production.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DemoUpstream {
  url: string;
  close(): Promise<void>;
}

export async function startDemoUpstream(host: string, port: number): Promise<DemoUpstream> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const body = JSON.stringify(
        { echo: 'demo upstream', method: req.method, path: req.url, headers: req.headers },
        null,
        2,
      );
      res.writeHead(200, { 'content-type': 'application/json' }).end(`${body}\n`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
