/**
 * zod → JSON Schema 2020-12 (what OpenAPI 3.1 uses), by `z.toJSONSchema`: the
 * registered shapes as `components.schemas` with `$ref`s between them, and a
 * lone parameter's schema. What the document does not need goes: the
 * per-schema `$schema` and `$id`, and the bounds zod puts on every integer
 * (JavaScript's safe range, not a rule of the API).
 */
import { z } from 'zod';
import type { Json } from '../schemas/operation.js';
import type { ShapeMeta } from '../schemas/registry.js';

export const componentRef = (id: string): string => `#/components/schemas/${id}`;

/** The registry's shapes by id, as `io` sees them. */
export function registrySchemas(
  registry: z.core.$ZodRegistry<ShapeMeta>,
  io: 'input' | 'output',
): Record<string, Json> {
  const { schemas } = z.toJSONSchema(registry, { io, uri: componentRef, override: tidy });
  const out: Record<string, Json> = {};
  for (const [id, schema] of Object.entries(schemas)) {
    const { $schema: _s, $id: _i, ...rest } = schema as Json;
    out[id] = rest;
  }
  return out;
}

/** One schema that references no registered shape (a path or query parameter). */
export function inlineSchema(schema: z.ZodType): Json {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: 'input', override: tidy }) as Json;
  return rest;
}

/** The id `schema` is registered under in `registry`. @throws when it is not registered */
export function shapeId(registry: z.core.$ZodRegistry<ShapeMeta>, schema: z.ZodType): string {
  const id = registry.get(schema)?.id;
  if (id === undefined) throw new Error('An operation names a shape that is not registered.');
  return id;
}

function tidy({ jsonSchema }: { jsonSchema: z.core.JSONSchema.BaseSchema }): void {
  if (jsonSchema.type !== 'integer') return;
  if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
  if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
}
