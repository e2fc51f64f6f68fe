/**
 * How a failed upstream exchange is answered: the route's timeout is a 504,
 * anything else (refused, reset, closed, a response undici will not parse) a
 * 502. Callers switch on the `code`, never on the message.
 */
import { GatewayError } from '../../errors.js';

const UPSTREAM_TIMEOUT = 'UPSTREAM_TIMEOUT';
const CLIENT_LEFT = 'CLIENT_LEFT';

/** The route's timeout ran out before the upstream answered. */
export function upstreamTimeout(): Error {
  return Object.assign(new Error('upstream timeout'), { code: UPSTREAM_TIMEOUT });
}

/** The client hung up: the upstream request is cancelled, nobody is answered. */
export function clientLeft(): Error {
  return Object.assign(new Error('client closed the connection'), { code: CLIENT_LEFT });
}

export function upstreamError(err: unknown): GatewayError {
  if (errorCode(err) === UPSTREAM_TIMEOUT) {
    return new GatewayError('gateway_timeout', 'The upstream did not answer in time.');
  }
  return new GatewayError('bad_gateway', 'The upstream refused or broke the connection.');
}

/** `ECONNREFUSED`, `UND_ERR_SOCKET`, … for the log line. */
export function errorCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}
