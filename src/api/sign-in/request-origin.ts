/** The origin a browser request was addressed to, for the same-origin rule; undefined when its Host is not one. */
import type { IncomingMessage } from 'node:http';
import type { PublicOrigin } from '../public-origin.js';

export function requestOrigin(
  publicOrigin: PublicOrigin | undefined,
  req: IncomingMessage,
): string | undefined {
  if (publicOrigin === undefined) return undefined;
  try {
    return publicOrigin(req);
  } catch {
    // A Host no URL holds: nothing is same-origin with it (the rule fails closed).
    return undefined;
  }
}
