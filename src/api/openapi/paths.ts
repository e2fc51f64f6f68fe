/**
 * The `paths` of the document, rendered from the operations' declarations
 * (`schemas/*-operations.ts`): parameters from the params and query zod
 * objects, the body and every answer a `$ref` to its registered shape, every
 * refusal the `Error` shape narrowed to its codes (and, on a page, HTML).
 */
import type { z } from 'zod';
import type { Answer, Json, Operation, Refusal } from '../schemas/operation.js';
import { answerShapes, requestShapes } from '../schemas/registry.js';
import { componentRef, inlineSchema, shapeId } from './json-schema.js';

const JSON_MEDIA = 'application/json';
/** A page's refusal for a browser (`Operation.pages`): the page again, showing it. */
const HTML_MEDIA = 'text/html';

/** `{path: {method: operation}}`, in the order of `operations`. */
export function renderPaths(operations: readonly Operation[]): Json {
  const paths: Record<string, Json> = {};
  for (const op of operations) paths[op.path] = { ...paths[op.path], [op.method]: render(op) };
  return paths;
}

function render(op: Operation): Json {
  const parameters = [...parametersOf(op.params, 'path'), ...parametersOf(op.query, 'query')];
  const responses: Record<string, Json> = {};
  for (const [status, answer] of Object.entries(op.answers)) responses[status] = answerOf(answer);
  for (const [status, refused] of Object.entries(op.refusals))
    responses[status] = refusalOf(refused, op.pages === true);
  return {
    operationId: op.operationId,
    summary: op.summary,
    ...(op.description === undefined ? {} : { description: op.description }),
    tags: op.tags,
    security: op.security,
    ...(parameters.length === 0 ? {} : { parameters }),
    ...(op.body === undefined
      ? {}
      : {
          requestBody: {
            required: op.body.required,
            content: content(op.body.mediaType, ref(shapeId(requestShapes, op.body.schema))),
          },
        }),
    responses,
  };
}

function parametersOf(shape: z.ZodObject | undefined, where: 'path' | 'query'): Json[] {
  if (shape === undefined) return [];
  return Object.entries(shape.shape).map(([name, field]) => {
    const { description, ...schema } = inlineSchema(field as z.ZodType);
    return {
      name,
      in: where,
      required: where === 'path' || !(field as z.ZodType).safeParse(undefined).success,
      ...(description === undefined ? {} : { description }),
      schema,
    };
  });
}

function answerOf({ description, schema, mediaType, headers }: Answer): Json {
  return {
    description,
    ...(headers === undefined ? {} : { headers }),
    ...(schema === undefined
      ? {}
      : { content: content(mediaType, ref(shapeId(answerShapes, schema))) }),
  };
}

/** @param page also answered as an HTML page (`Operation.pages`) */
function refusalOf({ description, codes }: Refusal, page: boolean): Json {
  const narrowed = { allOf: [ref('Error'), { properties: { error: { enum: codes } } }] };
  return {
    description,
    headers: { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } },
    content: {
      ...content(JSON_MEDIA, narrowed),
      ...(page ? content(HTML_MEDIA, { type: 'string' }) : {}),
    },
  };
}

const ref = (id: string): Json => ({ $ref: componentRef(id) });
const content = (mediaType = JSON_MEDIA, schema: Json): Json => ({ [mediaType]: { schema } });
