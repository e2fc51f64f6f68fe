import { GatewayError, isGatewayError } from '../errors.js';

/**
 * Runs Redis commands, turning any failure into `unavailable`: the store fails
 * closed. The message is fixed: ioredis errors may name the host, never
 * something a client should see.
 */
export async function attempt<T>(commands: () => Promise<T>): Promise<T> {
  try {
    return await commands();
  } catch (err) {
    if (isGatewayError(err)) throw err;
    throw new GatewayError('unavailable', 'The store is unreachable.', { cause: err });
  }
}
