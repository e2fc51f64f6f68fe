/** The operations under `/.well-known/`: the JWKS, the OAuth metadata and the OpenAPI document. */
import { PUBLIC, refusal, type Operation } from './operation.js';
import { AuthorizationServerMetadata, JwkSet, OpenApiDocument } from './well-known.js';

const tags = ['keys'];

export const getJwks: Operation = {
  method: 'get',
  path: '/.well-known/jwks.json',
  operationId: 'getJwks',
  summary: 'The public keys that verify the tokens (RFC 7517)',
  tags,
  security: PUBLIC,
  answers: {
    200: {
      description: 'The JWK Set; cache for up to 300 s.',
      schema: JwkSet,
      mediaType: 'application/jwk-set+json',
    },
  },
  refusals: {},
};

export const getOAuthMetadata: Operation = {
  method: 'get',
  path: '/.well-known/oauth-authorization-server',
  operationId: 'getOAuthMetadata',
  summary: 'OAuth authorization server metadata (RFC 8414)',
  description:
    'The endpoint URLs are on `publicUrl`; without it, on the origin the request was addressed to (`Host`, or a trusted proxy’s `X-Forwarded-Host`/`-Proto`), which must then be a valid host[:port], and the answer is `private`. `grant_types_supported` is exactly what `POST /1/oauth/token` serves.',
  tags,
  security: PUBLIC,
  answers: {
    200: {
      description: 'The metadata; cache for up to 300 s.',
      schema: AuthorizationServerMetadata,
    },
  },
  refusals: {
    400: refusal(
      'Without `publicUrl`: the Host (or trusted X-Forwarded-Host) is not a valid host[:port].',
      'invalid_request',
    ),
  },
};

export const getOpenApi: Operation = {
  method: 'get',
  path: '/.well-known/openapi.json',
  operationId: 'getOpenApi',
  summary: 'This document',
  tags,
  security: PUBLIC,
  answers: { 200: { description: 'The OpenAPI 3.1 document.', schema: OpenApiDocument } },
  refusals: {},
};
