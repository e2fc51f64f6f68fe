/**
 * h2c by prior knowledge (RFC 9113 §3.3) beside HTTP/1.1 on one cleartext
 * port: a connection whose first 24 bytes are the HTTP/2 client preface is
 * HTTP/2, any other is HTTP/1.1. Node has no `allowHTTP1` for cleartext, so
 * the first bytes are read here, put back (`unshift`), and the socket is
 * handed to the server of its protocol.
 */
import type { Socket } from 'node:net';

/** The client connection preface (RFC 9113 §3.4). */
export const HTTP2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export type Protocol = 'h2' | 'http1';

/**
 * Reads `socket`'s first bytes until they diverge from the preface (HTTP/1.1:
 * `GET`, `POST`, `PUT` … diverge by their first or second byte) or match
 * all of it (HTTP/2), then calls `decided` with the bytes put back and the
 * socket paused. A client that stops before deciding (fewer bytes than the
 * preface, or none) gets `stalled` after `timeoutMs`; one that leaves
 * before, nothing.
 */
export function sniffProtocol(
  socket: Socket,
  timeoutMs: number,
  decided: (protocol: Protocol) => void,
  stalled: () => void,
): void {
  let seen: Buffer | undefined;
  const finish = () => {
    clearTimeout(timer);
    socket.off('data', onData);
    socket.off('close', onClose);
    socket.off('error', onError);
  };
  const onData = (chunk: Buffer) => {
    seen = seen === undefined ? chunk : Buffer.concat([seen, chunk]);
    const length = Math.min(seen.length, HTTP2_PREFACE.length);
    const matches = seen.subarray(0, length).equals(HTTP2_PREFACE.subarray(0, length));
    if (matches && seen.length < HTTP2_PREFACE.length) return;
    finish();
    socket.pause();
    socket.unshift(seen);
    decided(matches ? 'h2' : 'http1');
  };
  const onClose = () => finish();
  // A reset before the first bytes: nobody else listens yet.
  const onError = () => {
    finish();
    socket.destroy();
  };
  const timer = setTimeout(() => {
    finish();
    stalled();
  }, timeoutMs);
  socket.on('data', onData);
  socket.on('close', onClose);
  socket.on('error', onError);
}
