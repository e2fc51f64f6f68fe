// What the bench's baseline proxies share: http-proxy-3 with the gateway's
// agent settings (src/proxy/forward/forwarder.ts) and nothing else — no auth, no
// header policy — served on PORT until stdin closes.
// Usage by the scripts beside it: serveProxy((proxyRequest) => handler).
import { Agent, createServer } from 'node:http';
import { createProxyServer } from 'http-proxy-3';

/**
 * Starts a server on process.argv[2] forwarding to process.argv[3].
 * @param {(proxyRequest: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void) => import('node:http').RequestListener} wrap
 *   builds the server's request handler around the plain proxying function.
 */
export function serveProxy(wrap) {
  const port = Number(process.argv[2]);
  const target = new URL(process.argv[3]);
  const agent = new Agent({
    keepAlive: true,
    keepAliveMsecs: 1000,
    maxSockets: 512,
    maxFreeSockets: 64,
    scheduling: 'lifo',
  });
  const proxy = createProxyServer({ xfwd: false, changeOrigin: false, prependPath: true });
  proxy.on('error', () => {});
  const proxyRequest = (req, res) =>
    proxy.web(req, res, { target, agent }, () => {
      if (res.headersSent) return void res.destroy();
      res.writeHead(502, { 'content-type': 'application/json' }).end('{"error":"bad_gateway"}');
    });
  createServer(wrap(proxyRequest)).listen(port, '127.0.0.1');
  process.stdin.resume();
  process.stdin.on('close', () => process.exit(0));
  process.on('SIGTERM', () => process.exit(0));
}
