/** OpenAPI operations under `/.well-known/`: the JWKS, the OAuth metadata and this document. */
import { type Json, json, ref, refusal } from './answers.js';

/** `/.well-known/jwks.json` */
export function jwksPath(): Json {
  return {
    get: {
      operationId: 'getJwks',
      summary: 'The public keys that verify the tokens (RFC 7517)',
      tags: ['keys'],
      security: [],
      responses: {
        '200': {
          description: 'The JWK Set; cache for up to 300 s.',
          content: { 'application/jwk-set+json': { schema: ref('JwkSet') } },
        },
      },
    },
  };
}

/** `/.well-known/oauth-authorization-server` */
export function oauthMetadataPath(): Json {
  return {
    get: {
      operationId: 'getOAuthMetadata',
      summary: 'OAuth authorization server metadata (RFC 8414)',
      description:
        'The endpoint URLs are on `publicUrl`; without it, on the origin the request was addressed to (`Host`, or a trusted proxy’s `X-Forwarded-Host`/`-Proto`), which must then be a valid host[:port], and the answer is `private`. `grant_types_supported` is exactly what `POST /1/oauth/token` serves.',
      tags: ['keys'],
      security: [],
      responses: {
        '200': {
          description: 'The metadata; cache for up to 300 s.',
          content: json(ref('AuthorizationServerMetadata')),
        },
        '400': refusal(
          'Without `publicUrl`: the Host (or trusted X-Forwarded-Host) is not a valid host[:port].',
          'invalid_request',
        ),
      },
    },
  };
}

/** `/.well-known/openapi.json` */
export function openApiPath(): Json {
  return {
    get: {
      operationId: 'getOpenApi',
      summary: 'This document',
      tags: ['keys'],
      security: [],
      responses: {
        '200': {
          description: 'The OpenAPI 3.1 document.',
          content: json({ type: 'object', required: ['openapi', 'paths'] }),
        },
      },
    },
  };
}
