/** The form body of the OAuth endpoints (token, revocation): read, and one parameter at a time. */
import { GatewayError } from '../../errors.js';
import { readBodyText } from '../request-input.js';
import type { ApiContext } from '../state.js';

const FORM = 'application/x-www-form-urlencoded';

export const invalidRequest = (description: string): GatewayError =>
  new GatewayError('invalid_request', description);

/** One value, or undefined when absent; a repeated parameter is refused (RFC 6749 §3.2). */
export function param(form: URLSearchParams, name: string): string | undefined {
  const values = form.getAll(name);
  if (values.length > 1) throw invalidRequest(`The ${name} parameter is repeated.`);
  return values[0];
}

/** One non-empty value; a missing or empty one is refused. */
export function requiredParam(form: URLSearchParams, name: string): string {
  const value = param(form, name);
  if (value === undefined || value === '')
    throw invalidRequest(`The ${name} parameter is required.`);
  return value;
}

export async function readForm(ctx: ApiContext, limit: number): Promise<URLSearchParams> {
  if (ctx.is(FORM) !== FORM) throw invalidRequest(`The body must be ${FORM}.`);
  return new URLSearchParams(await readBodyText(ctx, limit));
}
