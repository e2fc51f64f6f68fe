/** The form body of the OAuth endpoints (token, revocation): read, and one parameter at a time. */
import getRawBody from 'raw-body';
import { GatewayError } from '../../errors.js';
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

export async function readForm(ctx: ApiContext, limit: number): Promise<URLSearchParams> {
  if (ctx.is(FORM) !== FORM) throw invalidRequest(`The body must be ${FORM}.`);
  let text: string;
  try {
    text = await getRawBody(ctx.req, {
      limit,
      encoding: 'utf8',
      length: ctx.get('content-length') || undefined,
    });
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large')
      throw new GatewayError('payload_too_large', `The request body is over ${limit} bytes.`);
    throw new GatewayError('invalid_request', 'The request body could not be read.', {
      cause: err,
    });
  }
  return new URLSearchParams(text);
}
