/** Reading what a client sends to the api: query parameters and JSON bodies, strictly. */
import getRawBody from 'raw-body';
import type { z } from 'zod';
import { GatewayError } from '../errors.js';
import type { ApiContext } from './state.js';

/**
 * The query parameters `schema` names, each exactly once, validated by it
 * (the operation's declared query, `schemas/*-operations.ts`).
 * @throws `invalid_request` naming the parameter
 */
export function readQuery<S extends z.ZodObject>(ctx: ApiContext, schema: S): z.output<S> {
  const values: Record<string, string | undefined> = {};
  for (const name of Object.keys(schema.shape)) {
    const value = ctx.query[name];
    if (Array.isArray(value))
      throw new GatewayError('invalid_request', `The ${name} parameter is repeated.`);
    values[name] = value;
  }
  const result = schema.safeParse(values);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const name = String(issue?.path[0]);
  const problem =
    values[name] === undefined ? 'is required' : values[name] === '' ? 'is empty' : issue?.message;
  throw new GatewayError('invalid_request', `The ${name} parameter ${problem}.`);
}

/**
 * Reads at most `limit` bytes of JSON and validates it.
 * @throws `payload_too_large`, `invalid_request`
 */
export async function readJsonBody<S extends z.ZodType>(
  ctx: ApiContext,
  schema: S,
  limit: number,
): Promise<z.output<S>> {
  const text = await readBodyText(ctx, limit);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new GatewayError('invalid_request', 'The request body is not valid JSON.');
  }
  const result = schema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0];
    const field = issue?.path.length ? issue.path.join('.') : 'body';
    const reason =
      issue?.code === 'unrecognized_keys'
        ? `unknown field ${issue.keys.join(', ')}`
        : issue?.message;
    throw new GatewayError('invalid_request', `Invalid ${field}: ${reason}.`);
  }
  return result.data;
}

/**
 * At most `limit` bytes of the request body, as UTF-8 text: what the JSON
 * and the form readers share.
 * @throws `payload_too_large`, `invalid_request`
 */
export async function readBodyText(ctx: ApiContext, limit: number): Promise<string> {
  try {
    return await getRawBody(ctx.req, {
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
}
