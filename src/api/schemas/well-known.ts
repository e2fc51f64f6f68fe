/** The shapes under `/.well-known/`: the JWK Set, the RFC 8414 metadata, the OpenAPI document. */
import { z } from 'zod';
import { answerShapes } from './registry.js';

const publicKey = z.looseObject({
  kty: z.enum(['OKP', 'EC']),
  kid: z.string(),
  alg: z.enum(['EdDSA', 'ES256']),
  use: z.literal('sig'),
  // A private part is never published.
  d: z.never().optional(),
});

export const JwkSet = z
  .looseObject({ keys: z.array(publicKey) })
  .register(answerShapes, { id: 'JwkSet' });

const uri = z.url();
const strings = z.array(z.string());

/** RFC 8414 authorization server metadata, as the gateway fills it. */
export const AuthorizationServerMetadata = z
  .looseObject({
    issuer: z.string().meta({ description: '`tokens.issuer`.' }),
    token_endpoint: uri,
    jwks_uri: uri,
    grant_types_supported: strings,
    token_endpoint_auth_methods_supported: strings,
    response_types_supported: strings,
    scopes_supported: strings.optional(),
    revocation_endpoint: uri.optional().meta({ description: '`POST /1/oauth/revoke` (RFC 7009).' }),
    revocation_endpoint_auth_methods_supported: strings.optional(),
    code_challenge_methods_supported: strings
      .optional()
      .meta({ description: 'PKCE methods (RFC 7636): `S256` only.' }),
  })
  .register(answerShapes, { id: 'AuthorizationServerMetadata' });

export const OpenApiDocument = z
  .looseObject({ openapi: z.string(), paths: z.record(z.string(), z.unknown()) })
  .register(answerShapes, { id: 'OpenApiDocument' });
