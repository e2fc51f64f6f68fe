/** A command used wrongly (missing setting, unknown user, …): printed without a stack, exit 1. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
