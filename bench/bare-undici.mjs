// The benchmark's other baseline (issue 13): what forwarding costs on the
// stack the gateway's core is moving to — node:http in front, one undici
// Pool per upstream origin behind, `pool.dispatch` with a handler of undici
// 7's controller API, bodies streamed both ways with backpressure, pipelining
// 1, keep-alive. No auth, no header policy. Usage: node bare-undici.mjs PORT
// UPSTREAM_URL. Exits when its stdin closes.
import { createServer } from 'node:http';
import { Pool } from 'undici';

const port = Number(process.argv[2]);
const origin = new URL(process.argv[3]).origin;

/** Per origin: this process has one, the gateway one per route upstream. */
const pools = new Map();
function poolFor(key) {
  let pool = pools.get(key);
  if (pool === undefined) {
    // The gateway's http.Agent allows 512 sockets (src/proxy/forward/forwarder.ts).
    pool = new Pool(key, { connections: 512, pipelining: 1, keepAliveTimeout: 60_000 });
    pools.set(key, pool);
  }
  return pool;
}

/** Hop-by-hop headers (RFC 9110 §7.6.1) and those undici frames itself. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
]);

/** A flat [name, value, …] list of `raw` without the hop-by-hop headers. */
function forwardable(raw) {
  const out = [];
  for (let i = 0; i < raw.length; i += 2) {
    if (!HOP_BY_HOP.has(raw[i].toLowerCase())) out.push(raw[i], raw[i + 1]);
  }
  return out;
}

function badGateway(res) {
  if (res.headersSent) return void res.destroy();
  res.writeHead(502, { 'content-type': 'application/json' }).end('{"error":"bad_gateway"}');
}

createServer((req, res) => {
  // A body is known by its framing: a length, or chunked; neither, no body.
  const hasBody =
    req.headers['transfer-encoding'] !== undefined ||
    (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
  let controller;
  res.on('close', () => {
    if (!res.writableFinished) controller?.abort(new Error('client went away'));
  });
  poolFor(origin).dispatch(
    {
      path: req.url,
      method: req.method,
      headers: forwardable(req.rawHeaders),
      body: hasBody ? req : null,
    },
    {
      onRequestStart(ctl) {
        controller = ctl;
      },
      onResponseStart(ctl, statusCode, headers) {
        const out = {};
        for (const name of Object.keys(headers)) {
          if (!HOP_BY_HOP.has(name)) out[name] = headers[name];
        }
        res.writeHead(statusCode, out);
      },
      onResponseData(ctl, chunk) {
        if (!res.write(chunk)) {
          ctl.pause();
          res.once('drain', () => ctl.resume());
        }
      },
      onResponseEnd() {
        res.end();
      },
      onResponseError(ctl, err) {
        void err;
        badGateway(res);
      },
    },
  );
}).listen(port, '127.0.0.1');

process.stdin.resume();
process.stdin.on('close', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));
