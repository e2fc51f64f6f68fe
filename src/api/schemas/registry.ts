/**
 * The two registries of named shapes the OpenAPI document's
 * `components.schemas` is generated from (`openapi/components.ts`): what
 * clients send, read as zod reads its input, and what the gateway answers,
 * as its output. A shape a document names is registered here with its id.
 */
import { z } from 'zod';

export interface ShapeMeta {
  id: string;
  description?: string;
}

/** Request bodies (JSON and forms), converted with `io: 'input'`. */
export const requestShapes = z.registry<ShapeMeta>();
/** Answers, converted with `io: 'output'`. */
export const answerShapes = z.registry<ShapeMeta>();

/** Unix seconds, an integer. */
export const unixSeconds = (description = 'Unix seconds') => z.int().meta({ description });
