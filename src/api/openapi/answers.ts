/**
 * The pieces the OpenAPI operations share: schema references, JSON content,
 * error answers by CODE, and the refusals several operations give alike.
 */
export type Json = Record<string, unknown>;

export const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
export const json = (schema: Json): Json => ({ 'application/json': { schema } });

/** The `X-Request-Id` header every identity answer carries. */
export const REQUEST_ID_HEADER = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } };

/** An error answer whose `error` is one of `codes`. */
export function refusal(description: string, ...codes: string[]): Json {
  return {
    description,
    headers: REQUEST_ID_HEADER,
    content: json({
      allOf: [ref('Error'), { properties: { error: { enum: codes } } }],
    }),
  };
}

export const BAD_INPUT = refusal(
  'Malformed input (details in `error_description`).',
  'invalid_request',
);
export const STORE_DOWN = refusal(
  'The store is unreachable: nobody is let in on a guess.',
  'unavailable',
);
export const BUG = refusal(
  'A bug or a corrupt record, logged with the request id; never described.',
  'internal_error',
);
export const BASIC_REFUSED = refusal(
  'Basic credentials missing, malformed or wrong, or the account disabled (one answer for all).',
  'invalid_credentials',
);
export const BEARER_REFUSED = refusal(
  'The bearer token is missing, malformed, expired, revoked or its session ended.',
  'invalid_token',
);
export const THROTTLED = refusal(
  'Too many login attempts: see `Retry-After`.',
  'too_many_requests',
);
export const TOO_LARGE = refusal(
  'The body is larger than `limits.bodyBytes`.',
  'payload_too_large',
);

export const userIdParameter = {
  name: 'user_id',
  in: 'path',
  required: true,
  description: "The caller's own user id, or `current`.",
  schema: { type: 'string' },
};
