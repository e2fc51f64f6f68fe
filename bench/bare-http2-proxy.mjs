// The gRPC benchmark's peer (issue 47): the node:http2 proxy a person would
// write to front a gRPC service, and nothing else — h2c in (HTTP/2 by prior
// knowledge), one pooled h2c session to the upstream (opened again when it
// closes), each client stream relayed to a stream on it with Node's core
// HTTP/2 API: headers (pseudo-headers rebuilt, connection-specific ones
// dropped), messages piped both ways with backpressure, the upstream's
// trailers sent as the client's, a trailers-only answer kept trailers-only,
// resets passed both ways. No auth, no header policy.
// Usage: node bare-http2-proxy.mjs PORT UPSTREAM_URL. Exits when its stdin closes.
import { connect, constants, createServer } from 'node:http2';

const port = Number(process.argv[2]);
const upstream = new URL(process.argv[3]);

/** Never relayed: HTTP/2 forbids connection-specific fields (RFC 9113 §8.2.2), framing is the streams'. */
const NOT_RELAYED = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'http2-settings',
]);

function relayed(headers) {
  const out = {};
  for (const name of Object.keys(headers)) {
    if (name.charCodeAt(0) !== 58 && !NOT_RELAYED.has(name)) out[name] = headers[name];
  }
  return out;
}

/** The pooled session: one, multiplexed; a closed or failed one is replaced by the next stream. */
let session;
function upstreamSession() {
  if (session === undefined || session.closed || session.destroyed) {
    const opened = connect(upstream.origin);
    opened.on('error', () => {});
    opened.on('close', () => {
      if (session === opened) session = undefined;
    });
    session = opened;
  }
  return session;
}

function unavailable(stream) {
  if (stream.destroyed || stream.headersSent) return void stream.close(constants.NGHTTP2_CANCEL);
  stream.respond(
    { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '14' },
    { endStream: true },
  );
}

const server = createServer();
server.on('stream', (stream, headers) => {
  const out = relayed(headers);
  out[':method'] = headers[':method'];
  out[':path'] = headers[':path'];
  out[':scheme'] = 'http';
  out[':authority'] = upstream.host;
  const up = upstreamSession().request(out, { endStream: false });
  let trailers;
  up.on('response', (head, flags) => {
    if (stream.destroyed) return;
    const answer = { ':status': head[':status'], ...relayed(head) };
    if ((flags & constants.NGHTTP2_FLAG_END_STREAM) !== 0) {
      stream.respond(answer, { endStream: true });
      return;
    }
    stream.respond(answer, { waitForTrailers: true });
    up.pipe(stream);
  });
  up.on('trailers', (fields) => {
    trailers = relayed(fields);
  });
  stream.on('wantTrailers', () => {
    if (trailers !== undefined) stream.sendTrailers(trailers);
    else stream.close(constants.NGHTTP2_CANCEL); // a gRPC answer without trailers was cut
  });
  // A failure closes the stream with it: answered once, by 'close'.
  up.on('error', () => {});
  up.on('close', () => {
    if (up.rstCode !== constants.NGHTTP2_NO_ERROR && !stream.destroyed) {
      if (stream.headersSent) stream.close(up.rstCode);
      else unavailable(stream);
    }
  });
  stream.on('close', () => {
    if (!up.closed) up.close(constants.NGHTTP2_CANCEL);
  });
  stream.on('error', () => {});
  stream.pipe(up);
});
server.listen(port, '127.0.0.1');

process.stdin.resume();
process.stdin.on('close', () => process.exit(0));
process.on('SIGTERM', () => process.exit(0));
