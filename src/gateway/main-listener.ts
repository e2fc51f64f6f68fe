/**
 * The main listener's connections: plain HTTP/1.1 (the default), and with
 * `listen.tls` and/or `listen.http2` a server of its own that binds the
 * port and hands each connection to the server of its protocol — by ALPN
 * over TLS (`h2`, `http/1.1`), by the client preface on cleartext (h2c by
 * prior knowledge, `http/protocol-sniff.ts`). Both protocol servers feed the
 * one dispatcher (`http/dispatch.ts`), so every request is admitted the same
 * way whatever it came over (docs/http2.md).
 */
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { createServer as createHttp2Server, type Http2Server } from 'node:http2';
import { createServer as createTcpServer, type Server as NetServer, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/index.js';
import { GatewayError } from '../errors.js';
import { sniffProtocol, type Protocol } from '../http/protocol-sniff.js';
import type { Metrics } from '../ops/metrics.js';
import { hardenHttp2, http2ServerOptions } from './http2-limits.js';

export interface MainListener {
  /** What binds `listen.host:listen.port`. */
  bound: NetServer;
  /** Every HTTP/1.1 request, cleartext or TLS: its `request`, `upgrade` and `clientError` events. */
  http1: Server;
  /** Every HTTP/2 request (`listen.http2`), through Node's compatibility API. */
  http2: Http2Server | undefined;
  /** Takes no new connections; idle HTTP/1.1 ones close, HTTP/2 ones get GOAWAY and finish their streams. */
  stop(): Promise<void>;
  /** Ends every connection now. */
  closeAll(): void;
  /**
   * Reads `listen.tls`'s files again into the listener (new handshakes
   * get them); throws, changing nothing, when they cannot be used.
   * Undefined without `listen.tls`.
   */
  reloadTls: (() => void) | undefined;
}

export interface MainListenerDeps {
  config: Pick<GatewayConfig, 'listen' | 'server'>;
  metrics: Metrics;
  log: Logger;
  /** A cleartext connection that sent neither an HTTP/1.1 request nor the preface in time: answered 408. */
  onStalled(socket: Socket): void;
}

export function createMainListener(http1: Server, deps: MainListenerDeps): MainListener {
  const { listen, server } = deps.config;
  if (!listen.http2 && listen.tls === undefined) return plainHttp1(http1);
  const http2 = listen.http2 ? createHttp2Server(http2ServerOptions(server)) : undefined;
  const sessions = http2 === undefined ? undefined : hardenHttp2(http2, server, deps);
  const handOff = (socket: Socket, protocol: Protocol) => {
    if (protocol === 'h2' && http2 !== undefined) return void http2.emit('connection', socket);
    http1.emit('connection', socket);
    // Paused while its first bytes were read (a TLS socket was not).
    socket.resume();
  };
  const pending = new Set<Socket>();
  const tls = listen.tls;
  let reloadTls: MainListener['reloadTls'];
  let bound: NetServer;
  if (tls !== undefined) {
    const secure = createTlsServer({
      ...readPair(tls),
      ALPNProtocols: http2 === undefined ? ['http/1.1'] : ['h2', 'http/1.1'],
      handshakeTimeout: server.headersTimeoutMs,
    });
    secure.on('secureConnection', (socket: TLSSocket) =>
      handOff(socket, socket.alpnProtocol === 'h2' ? 'h2' : 'http1'),
    );
    reloadTls = () => secure.setSecureContext(readPair(tls));
    bound = secure;
  } else {
    bound = createTcpServer((socket) => {
      pending.add(socket);
      sniffProtocol(
        socket,
        server.headersTimeoutMs,
        (protocol) => {
          pending.delete(socket);
          handOff(socket, protocol);
        },
        () => {
          pending.delete(socket);
          deps.onStalled(socket);
        },
      );
    });
  }
  // Node's HTTP/1.1 server starts its checks of slow requests when it listens; it never does itself here.
  bound.once('listening', () => http1.emit('listening'));
  return {
    bound,
    http1,
    http2,
    reloadTls,
    stop: () => {
      const closed = new Promise<void>((resolve) => bound.close(() => resolve()));
      http1.close();
      sessions?.closeAll();
      return closed;
    },
    closeAll() {
      for (const socket of pending) socket.destroy();
      http1.closeAllConnections();
      sessions?.destroyAll();
    },
  };
}

function plainHttp1(http1: Server): MainListener {
  return {
    bound: http1,
    http1,
    http2: undefined,
    reloadTls: undefined,
    stop: () => new Promise<void>((resolve) => http1.close(() => resolve())),
    closeAll: () => http1.closeAllConnections(),
  };
}

/** The certificate chain and key, read now; a file that cannot be read names its key path. */
function readPair(tls: { cert: string; key: string }): { cert: Buffer; key: Buffer } {
  const read = (file: string, key: string) => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new GatewayError('unavailable', `${key}: cannot read ${file}`, { cause: err });
    }
  };
  return { cert: read(tls.cert, 'listen.tls.cert'), key: read(tls.key, 'listen.tls.key') };
}
