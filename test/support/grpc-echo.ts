/**
 * A real gRPC upstream (@grpc/grpc-js on 127.0.0.1, h2c or h2 over TLS)
 * serving `echo.proto`, its connections counted; an upstream that resets its
 * streams, and a client.
 */
import { constants, createServer } from 'node:http2';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as loader from '@grpc/proto-loader';

export interface EchoMsg {
  text?: string;
  blob?: Buffer;
  count?: number;
  delay_ms?: number;
}

/** What the upstream saw of one call. */
export interface SeenCall {
  method: string;
  metadata: Record<string, unknown>;
  /** The call's deadline as the upstream read it (from `grpc-timeout`), or Infinity. */
  deadline: number;
  /** Settled when the call ends: `cancelled` when the client (the gateway) cancelled it. */
  ended: Promise<'cancelled' | 'done'>;
}

/** How a test's echo upstream differs from the default (h2c on a free port). */
export interface EchoOptions {
  /** h2 over TLS (ALPN h2) with this key and certificate, PEM: the URL is `https://`. */
  tls?: { key: Buffer; cert: Buffer };
  /** grpc-js server options, e.g. `grpc.max_connection_age_ms` (a GOAWAY after that age). */
  server?: grpc.ServerOptions;
  /** This port (an upstream started again where one was), else a free one. */
  port?: number;
}

/** The upstream's TCP connections: every one is an HTTP/2 session of the gateway's. */
export interface Connections {
  opened: number;
  open: number;
  /** The most open at once. */
  peak: number;
}

export interface EchoUpstream {
  url: string;
  port: number;
  connections: Connections;
  calls: SeenCall[];
  /** Live server-side calls, to cancel from the upstream's side. */
  live: Set<
    grpc.ServerWritableStream<EchoMsg, EchoMsg> | grpc.ServerDuplexStream<EchoMsg, EchoMsg>
  >;
  close(): Promise<void>;
}

const PROTO = fileURLToPath(new URL('./echo.proto', import.meta.url));
const definition = grpc.loadPackageDefinition(
  loader.loadSync(PROTO, { keepCase: true, defaults: true }),
) as unknown as { test: { echo: { Echo: grpc.ServiceClientConstructor } } };
export const EchoClient = definition.test.echo.Echo;

function seen(
  upstream: EchoUpstream,
  method: string,
  call:
    | grpc.ServerUnaryCall<EchoMsg, EchoMsg>
    | grpc.ServerReadableStream<EchoMsg, EchoMsg>
    | grpc.ServerWritableStream<EchoMsg, EchoMsg>
    | grpc.ServerDuplexStream<EchoMsg, EchoMsg>,
): void {
  const events = call as unknown as NodeJS.EventEmitter;
  const ended = new Promise<'cancelled' | 'done'>((resolve) => {
    events.on('cancelled', () => resolve('cancelled'));
    events.on('finish', () => resolve('done'));
    events.on('close', () => resolve('done'));
  });
  const deadline = call.getDeadline();
  upstream.calls.push({
    method,
    metadata: call.metadata.getMap(),
    deadline: deadline instanceof Date ? deadline.getTime() : Number(deadline),
    ended,
  });
}

/**
 * Echoes: metadata `x-echo` comes back as initial metadata and `x-trailer` in
 * the trailers. Its connections are accepted here and handed to the grpc-js
 * server (its connection injector), so they can be counted.
 */
export async function startEchoUpstream(options: EchoOptions = {}): Promise<EchoUpstream> {
  const server = new grpc.Server({
    'grpc.max_receive_message_length': 64 << 20,
    'grpc.max_send_message_length': 64 << 20,
    ...options.server,
  });
  const upstream: EchoUpstream = {
    url: '',
    port: 0,
    connections: { opened: 0, open: 0, peak: 0 },
    calls: [],
    live: new Set(),
    close: async () => {},
  };
  const trailer = () => {
    const t = new grpc.Metadata();
    t.set('x-trailer', 'from-upstream');
    return t;
  };
  server.addService(EchoClient.service, {
    Unary(call: grpc.ServerUnaryCall<EchoMsg, EchoMsg>, done: grpc.sendUnaryData<EchoMsg>) {
      seen(upstream, 'Unary', call);
      const head = new grpc.Metadata();
      head.set('x-echo', String(call.metadata.get('x-echo')[0] ?? ''));
      // A delayed answer sends nothing before it: the response head is late too.
      if ((call.request.delay_ms ?? 0) === 0) call.sendMetadata(head);
      const answer = () =>
        done(null, { text: call.request.text, blob: call.request.blob }, trailer());
      if ((call.request.delay_ms ?? 0) > 0) setTimeout(answer, call.request.delay_ms);
      else answer();
    },
    ServerStream(call: grpc.ServerWritableStream<EchoMsg, EchoMsg>) {
      seen(upstream, 'ServerStream', call);
      upstream.live.add(call);
      call.on('cancelled', () => upstream.live.delete(call));
      const count = call.request.count ?? 0;
      for (let i = 0; i < count; i++) call.write({ text: `${call.request.text}-${i}` });
      if (count > 0) call.end(trailer());
    },
    ClientStream(
      call: grpc.ServerReadableStream<EchoMsg, EchoMsg>,
      done: grpc.sendUnaryData<EchoMsg>,
    ) {
      seen(upstream, 'ClientStream', call);
      const texts: string[] = [];
      let bytes = 0;
      call.on('data', (m: EchoMsg) => {
        texts.push(m.text ?? '');
        bytes += m.blob?.length ?? 0;
      });
      call.on('end', () => done(null, { text: texts.join(','), count: bytes }));
    },
    Bidi(call: grpc.ServerDuplexStream<EchoMsg, EchoMsg>) {
      seen(upstream, 'Bidi', call);
      upstream.live.add(call);
      call.on('data', (m: EchoMsg) => call.write({ text: `echo:${m.text}` }));
      call.on('end', () => call.end(trailer()));
      call.on('cancelled', () => upstream.live.delete(call));
    },
  });
  const credentials =
    options.tls === undefined
      ? grpc.ServerCredentials.createInsecure()
      : grpc.ServerCredentials.createSsl(null, [
          { private_key: options.tls.key, cert_chain: options.tls.cert },
        ]);
  const injector = server.createConnectionInjector(credentials);
  const counted = upstream.connections;
  const tcp = createTcpServer((socket) => {
    counted.opened++;
    counted.peak = Math.max(counted.peak, ++counted.open);
    socket.once('close', () => counted.open--);
    injector.injectConnection(socket);
  });
  await new Promise<void>((resolve) => tcp.listen(options.port ?? 0, '127.0.0.1', resolve));
  upstream.port = (tcp.address() as AddressInfo).port;
  const scheme = options.tls === undefined ? 'http' : 'https';
  upstream.url = `${scheme}://127.0.0.1:${upstream.port}`;
  upstream.close = () =>
    new Promise<void>((resolve) => {
      // Its sessions destroyed at once (a GOAWAY, then the sockets close), the port freed.
      server.forceShutdown();
      tcp.close(() => resolve());
    });
  return upstream;
}

/** A raw h2c upstream that answers a call's head, then resets its stream (RST_STREAM CANCEL). */
export async function startResettingUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer();
  server.on('stream', (stream) => {
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' });
    setTimeout(() => stream.close(constants.NGHTTP2_CANCEL), 100);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A client of `echo.proto` at `address` (h2c), messages up to 64 MiB. */
export function echoClient(address: string): grpc.Client & Record<string, Function> {
  return new EchoClient(address, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': 64 << 20,
    'grpc.max_send_message_length': 64 << 20,
  }) as unknown as grpc.Client & Record<string, Function>;
}

/** Metadata with a bearer token (and any other pairs). */
export function withToken(
  token: string | undefined,
  pairs: Record<string, string> = {},
): grpc.Metadata {
  const md = new grpc.Metadata();
  if (token !== undefined) md.set('authorization', `Bearer ${token}`);
  for (const [k, v] of Object.entries(pairs)) md.set(k, v);
  return md;
}

/** A unary call as a promise: the answer, or the gRPC error (code, details, metadata). */
export function unary(
  client: grpc.Client & Record<string, Function>,
  request: EchoMsg,
  metadata: grpc.Metadata,
  options: grpc.CallOptions = {},
  /** Another service name for the same method (a route that rewrites it to `test.echo.Echo`). */
  service = '/test.echo.Echo',
): Promise<{
  answer?: EchoMsg;
  error?: grpc.ServiceError;
  head?: grpc.Metadata;
  trailers?: grpc.Metadata;
}> {
  const method = EchoClient.service.Unary as grpc.MethodDefinition<EchoMsg, EchoMsg>;
  return new Promise((resolve) => {
    let head: grpc.Metadata | undefined;
    let trailers: grpc.Metadata | undefined;
    const call = client.makeUnaryRequest(
      `${service}/Unary`,
      method.requestSerialize,
      method.responseDeserialize,
      request,
      metadata,
      options,
      (error: grpc.ServiceError | null, answer?: EchoMsg) =>
        setImmediate(() => resolve(error ? { error, head, trailers } : { answer, head, trailers })),
    );
    call.on('metadata', (m) => (head = m));
    call.on('status', (s) => (trailers = s.metadata));
  });
}
