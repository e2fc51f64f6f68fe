/**
 * One raw HTTP/1.1 exchange on a socket of its own: the bytes written as
 * given, the answer read as text until the gateway closes the connection.
 */
import { connect } from 'node:net';

/**
 * Writes `text` on a fresh socket to `port` and resolves with everything read
 * until the gateway closes it (or, past `timeoutMs`, with what came so far).
 */
export function rawExchange(port: number, text: string, timeoutMs = 5000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
    socket.setTimeout(timeoutMs, () => socket.destroy());
    socket.write(text);
  });
}
