/**
 * A WebSocket upgrade request sent over a raw socket, as a client would
 * send it, and the gateway's answer as bytes: the refusals are read to the
 * end (the gateway closes the socket after them), a 101's head alone.
 */
import { connect } from 'node:net';

/**
 * Sends `GET path` with the upgrade headers and `headers` (`Name: value`
 * lines) to `gatewayUrl`. `until: 'close'` resolves with everything up to
 * the gateway closing the socket; `'head'` with the answer's head, then
 * closes it.
 */
export function rawUpgrade(
  gatewayUrl: string,
  path: string,
  headers: readonly string[],
  until: 'close' | 'head',
): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const socket = connect(Number(new URL(gatewayUrl).port), '127.0.0.1');
    let data = '';
    socket.on('data', (chunk) => {
      data += chunk.toString('latin1');
      if (until === 'head' && data.includes('\r\n\r\n')) {
        socket.destroy();
        resolve(data);
      }
    });
    socket.on('close', () => resolve(data));
    socket.on('error', reject);
    socket.write(
      [
        `GET ${path} HTTP/1.1`,
        'Host: gw',
        'Connection: Upgrade',
        'Upgrade: websocket',
        'Sec-WebSocket-Version: 13',
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
        ...headers,
        '',
        '',
      ].join('\r\n'),
    );
  });
}
