/**
 * What one operation of the gateway's own HTTP API is, declared once beside
 * its group's shapes: method, path, summary, its request's zod schemas, its
 * answers (status → registered zod schema) and its refusals (status → error
 * codes). Routes validate with the same schemas; `openapi/` renders the list
 * as the OpenAPI document.
 */
import type { z } from 'zod';
import type { ErrorCode } from '../../errors.js';

export type Json = Record<string, unknown>;
export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** An answer with a body (a registered schema) or without one. */
export interface Answer {
  description: string;
  /** Registered in `answerShapes`; omitted: no body. */
  schema?: z.ZodType;
  /** Default `application/json`. */
  mediaType?: string;
  /** OpenAPI header objects by name. */
  headers?: Json;
}

/** A refusal: the error body whose `error` is one of `codes`. */
export interface Refusal {
  description: string;
  codes: readonly ErrorCode[];
}

export interface Operation {
  method: Method;
  /** OpenAPI template: `/1/tenants/{tenant_id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: readonly string[];
  /** OpenAPI security requirements. */
  security: readonly Json[];
  /** Path parameters: each property one, described by its `.meta()`. */
  params?: z.ZodObject;
  /** Query parameters: each property one; optional ones are not required. */
  query?: z.ZodObject;
  /** Registered in `requestShapes`. */
  body?: { schema: z.ZodType; required: boolean; mediaType?: string };
  answers: Readonly<Record<number, Answer>>;
  refusals: Readonly<Record<number, Refusal>>;
  /**
   * A page a browser shows (the sign-in page): each refusal is also answered
   * as HTML (`text/html`) to a request that prefers it to JSON.
   */
  pages?: boolean;
}

export const BASIC = [{ basic: [] }];
export const BEARER = [{ bearer: [] }];
/** A bearer token, or the session cookie (`sessions.cookie.name`). */
export const SESSION_OR_BEARER = [{ bearer: [] }, { session: [] }];
/** No credential asked for (the document's `[{}]`: anonymous allowed). */
export const ANONYMOUS = [{}];
/** No security requirement at all. */
export const PUBLIC: Json[] = [];

/** The `X-Request-Id` header every identity answer carries. */
export const REQUEST_ID = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } };
export const NO_STORE = { 'Cache-Control': { schema: { const: 'no-store' } } };

/** An answer carrying the request id, and `schema` as its JSON body. */
export const answer = (description: string, schema?: z.ZodType, headers: Json = {}): Answer => ({
  description,
  headers: { ...REQUEST_ID, ...headers },
  ...(schema === undefined ? {} : { schema }),
});

export const refusal = (description: string, ...codes: ErrorCode[]): Refusal => ({
  description,
  codes,
});
