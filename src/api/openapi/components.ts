/**
 * The document's `components`: security schemes, the request-id header, and
 * every registered shape (`schemas/registry.ts`) as JSON Schema.
 */
import type { Json } from '../schemas/operation.js';
import '../schemas/error.js';
import { answerShapes, requestShapes } from '../schemas/registry.js';
import { registrySchemas } from './json-schema.js';

export function components(): Json {
  return {
    securitySchemes: {
      basic: { type: 'http', scheme: 'basic', description: 'e-mail and password' },
      bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      session: {
        type: 'apiKey',
        in: 'cookie',
        name: '__Host-tg_session',
        description:
          'The browser session cookie of `POST /1/sign-in` (`sessions.cookie.name`; `tg_session` with `sessions.cookie.secure: false`); an unsafe method with it must come from the same origin',
      },
    },
    headers: {
      RequestId: {
        description: "The request's id: the client's when well-formed, else a new one.",
        schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' },
      },
    },
    // By name: the order modules happen to be loaded in says nothing.
    schemas: Object.fromEntries(
      Object.entries({
        ...registrySchemas(answerShapes, 'output'),
        ...registrySchemas(requestShapes, 'input'),
      }).sort(([a], [b]) => (a < b ? -1 : 1)),
    ),
  };
}
