// The benchmark's upstream: answers every request 200 with the same ~200-byte
// JSON body over keep-alive. Usage: node upstream.mjs PORT. Exits when its
// stdin closes, so it never outlives the benchmark that started it.
import { createServer } from 'node:http';

const port = Number(process.argv[2]);
const body = Buffer.from(
  JSON.stringify({
    id: 'ord_0001',
    tenant: 'bench-org',
    status: 'shipped',
    items: [
      { sku: 'A-100', qty: 2, price: 1250 },
      { sku: 'B-200', qty: 1, price: 4999 },
    ],
    total: 7499,
    currency: 'EUR',
    updated_at: '2024-01-01T00:00:00Z',
    note: 'fixed benchmark payload',
  }),
);

const server = createServer((req, res) => {
  // Drain any request body before answering, so the connection stays reusable.
  req.resume();
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
});
// Longer than any pause between runs: a proxy's pooled socket must not be
// closed under it (a reset would show up as a 502, not as the proxy's cost).
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1');

process.stdin.resume();
process.stdin.on('close', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));
