/**
 * The gRPC benchmark's driver (issue 47): unary calls over ONE HTTP/2
 * connection (h2c by prior knowledge), `streams` of them in flight at once,
 * multiplexed. A raw `node:http2` client, not @grpc/grpc-js: each call is a
 * HEADERS frame and one DATA frame of gRPC's length-prefixed message (the
 * 5-byte prefix and the protobuf bytes computed once), so the driver costs
 * little of the two cores the proxies share with it. A call counts as
 * answered only when it comes back 200 with `grpc-status` 0 in its trailers
 * and the echoed message byte for byte.
 */
import { connect, type ClientHttp2Session, type OutgoingHttpHeaders } from 'node:http2';
import { createHistogram, performance, type RecordableHistogram } from 'node:perf_hooks';

/** The echo service's unary method (`test/support/echo.proto`). */
export const GRPC_PATH = '/test.echo.Echo/Unary';

/** `test.echo.Msg { text }`: field 1, wire type 2 (length-delimited), then the UTF-8 bytes. */
function echoMessage(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length > 127) throw new Error('one length byte only');
  return Buffer.concat([Buffer.from([0x0a, bytes.length]), bytes]);
}

/** gRPC's message framing: a compressed flag (0), the length (4 bytes, big-endian), the message. */
function grpcFrame(message: Buffer): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
}

/** The one request every call sends: a small message (24 bytes of text). */
export const CALL_BODY = grpcFrame(echoMessage('tenant-gateway bench msg'));

export interface GrpcTarget {
  name: string;
  port: number;
  /** Metadata sent with every call (the bearer token, the tenant). */
  headers: Record<string, string>;
  /** Calls in flight at once on the one connection. */
  streams: number;
}

export interface GrpcRun {
  /** Calls answered in full: 200, the echoed message, `grpc-status` 0. */
  completed: number;
  /** Calls that ended any other way (a refusal, a reset, a wrong answer). */
  failed: number;
  /** The first failure's description, when there was one. */
  firstFailure?: string;
  seconds: number;
  /** Latency of every answered call, in µs. */
  latencies: RecordableHistogram;
}

/** Either a fixed number of calls, or as many as fit in `seconds`. */
export type GrpcLength = { amount: number } | { seconds: number };

/** Opens one connection to `target`, makes the calls, closes it. */
export async function driveGrpc(target: GrpcTarget, length: GrpcLength): Promise<GrpcRun> {
  const session = await openSession(target.port);
  const headers: OutgoingHttpHeaders = {
    ':method': 'POST',
    ':path': GRPC_PATH,
    'content-type': 'application/grpc',
    te: 'trailers',
    ...target.headers,
  };
  const run: GrpcRun = {
    completed: 0,
    failed: 0,
    seconds: 0,
    latencies: createHistogram({ lowest: 1, highest: 60_000_000, figures: 3 }),
  };
  const started = performance.now();
  const deadline = 'seconds' in length ? started + length.seconds * 1000 : Infinity;
  let left = 'amount' in length ? length.amount : Infinity;
  const more = (): boolean => left-- > 0 && performance.now() < deadline;
  const loop = (done: () => void): void => {
    if (!more()) return done();
    call(session, headers, run, () => loop(done));
  };
  await Promise.all(
    Array.from({ length: target.streams }, () => new Promise<void>((resolve) => loop(resolve))),
  );
  run.seconds = (performance.now() - started) / 1000;
  await new Promise<void>((resolve) => session.close(resolve));
  return run;
}

function openSession(port: number): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = connect(`http://127.0.0.1:${port}`);
    session.once('connect', () => {
      session.off('error', reject);
      session.on('error', () => {}); // each open stream reports it
      resolve(session);
    });
    session.once('error', reject);
  });
}

/** One unary call; `next` once it has ended, whichever way. */
function call(
  session: ClientHttp2Session,
  headers: OutgoingHttpHeaders,
  run: GrpcRun,
  next: () => void,
): void {
  const started = performance.now();
  const stream = session.request(headers);
  const chunks: Buffer[] = [];
  let status: unknown;
  let grpcStatus: unknown;
  stream.on('response', (head) => {
    status = head[':status'];
    grpcStatus = head['grpc-status']; // a trailers-only answer
  });
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  stream.on('trailers', (trailers) => (grpcStatus = trailers['grpc-status']));
  stream.on('error', () => {});
  stream.on('close', () => {
    const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    if (status === 200 && grpcStatus === '0' && CALL_BODY.equals(body as Buffer)) {
      run.completed++;
      run.latencies.record(Math.max(1, Math.round((performance.now() - started) * 1000)));
    } else {
      run.failed++;
      run.firstFailure ??= `status ${String(status)}, grpc-status ${String(grpcStatus)}, rst ${stream.rstCode}, ${body?.length ?? 0} bytes`;
    }
    next();
  });
  stream.end(CALL_BODY);
}
