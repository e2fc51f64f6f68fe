/**
 * CORS for browser apps, one policy shape for two places: the identity
 * endpoints (the top-level `cors`) and each route (`routes[].cors`).
 */
import { z } from 'zod';
import { boolean, headerName, integer } from './values.js';

/**
 * A browser origin a CORS policy allows: `scheme://host[:port]` exactly as
 * browsers send it, one wildcard label allowed (`https://*.example.com`), or
 * `*` alone (any origin, never with credentials).
 */
const corsOrigin = z
  .string()
  .refine((origin) => {
    if (origin === '*') return true;
    const concrete = origin.replace(/^(https?:\/\/)\*\./, '$1x.');
    try {
      return new URL(concrete).origin === concrete;
    } catch {
      return false;
    }
  }, 'must be an origin as browsers send it (https://app.example.com, lower case, no path), https://*.example.com, or *')
  .meta({ typeName: 'origin' });

/**
 * CORS for browser apps (`proxy/decide/cors.ts`): the gateway answers preflights
 * itself, before authentication, and puts the CORS headers on every answer.
 */
export const corsPolicy = z
  .strictObject({
    origins: z
      .array(corsOrigin)
      .min(1, 'must name at least one origin')
      .describe(
        'origins allowed, exactly as browsers send them (`https://app.example.com`), one wildcard label allowed (`https://*.example.com`); `*` alone allows any origin, never with `credentials`',
      ),
    methods: z
      .array(
        z
          .string()
          .regex(/^[A-Za-z]+$/, 'must be an HTTP method')
          .transform((m) => m.toUpperCase())
          .meta({ typeName: 'HTTP method' }),
      )
      .min(1)
      .default(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'])
      .describe('methods a page may use (any case)'),
    headers: z
      .array(headerName)
      .default(['Authorization', 'Content-Type'])
      .describe('request headers a page may send (a bearer API needs `Authorization`)'),
    exposeHeaders: z
      .array(headerName)
      .default([])
      .describe('response headers a page may read besides the CORS-safelisted ones'),
    credentials: boolean()
      .default(false)
      .describe(
        'lets a page send cookies and read the answer (`Access-Control-Allow-Credentials`)',
      ),
    maxAgeSeconds: integer(0, 86_400)
      .default(600)
      .describe("how long a browser may cache a preflight's answer"),
  })
  .superRefine((value, ctx) => {
    if (!value.origins.includes('*')) return;
    if (value.origins.length > 1) {
      ctx.addIssue({
        code: 'custom',
        path: ['origins'],
        message: '* allows every origin: list it alone',
      });
    }
    if (value.credentials) {
      ctx.addIssue({
        code: 'custom',
        path: ['credentials'],
        message: 'cannot be true with origins [*] (browsers refuse it): list the origins',
      });
    }
  });

/** The `cors` key: the policy of the identity endpoints. */
export const cors = corsPolicy.optional().meta({
  description:
    'CORS for the identity endpoints (`/1/…`, `/.well-known/…`), so a browser app can log in; the keys are those of `routes[].cors`.',
  examples: [{ origins: ['https://app.example.com'], credentials: true }],
});
