/** A command used wrongly (missing setting, unknown user, …): printed without a stack, exit 1. */

import { isGatewayError } from '../errors.js';

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * For `.catch` on an identity operation: its `not_found` refusal said as the
 * CLI says it (`message`, "acme has no domain x.example"); others as they are.
 */
export function notFoundAs(message: string): (err: unknown) => never {
  return (err) => {
    if (isGatewayError(err) && err.code === 'not_found') throw new UsageError(message);
    throw err;
  };
}
