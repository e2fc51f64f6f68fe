/**
 * The shapes of a tenant's identity provider: the settings an admin sends
 * (the rules are `auth/federation/tenant-idps.ts`', the CLI's too; here they gain the
 * document's descriptions) and the view every answer gives (the client
 * secret write-only: only `client_secret_set`).
 */
import { z } from 'zod';
import { idpSettingsSchema } from '../../auth/federation/tenant-idps.js';
import { answerShapes, requestShapes } from './registry.js';

const rules = idpSettingsSchema.shape;
const ISSUER = {
  pattern: '^https://[^?#\\s]+$',
  description:
    "The IdP's issuer, exactly as its tokens name it (`iss`): compared exactly, never normalised",
};
const CLIENT_ID = { description: "The gateway's client id at the IdP (an ID token's `aud`)" };
const DOMAINS = 'E-mail domains whose verified addresses may sign in (DNS names)';
const ROLE = 'The role a user gets in the tenant at first sign-in';
const LINK = 'Whether a local user with the same verified e-mail may be linked';

export const TenantIdpSettings = idpSettingsSchema
  .extend({
    issuer: rules.issuer.meta(ISSUER),
    client_id: rules.client_id.meta(CLIENT_ID),
    client_secret: rules.client_secret.meta({
      writeOnly: true,
      description:
        'Write-only, stored sealed (needs `sso.secretsKeyFile`). Omitted: the stored one is kept while `issuer` and `client_id` stay the same; null: none',
    }),
    domains: rules.domains.meta({ description: DOMAINS }),
    role: rules.role.meta({ description: ROLE }),
    link_existing: rules.link_existing.meta({ description: LINK }),
  })
  .register(requestShapes, { id: 'TenantIdpSettings' });

export const TenantIdp = z
  .strictObject({
    tenant_id: z.string(),
    issuer: z.string().max(1024).meta(ISSUER),
    client_id: z
      .string()
      .min(1)
      .max(255)
      .regex(/^[\x21-\x7e]+$/)
      .meta(CLIENT_ID),
    client_secret_set: z.boolean().meta({ description: 'Whether a client secret is stored' }),
    domains: z
      .array(z.string())
      .min(1)
      .max(100)
      .meta({ description: 'Lower-case, sorted, without duplicates' }),
    role: z.enum(['admin', 'member']).meta({ description: ROLE }),
    link_existing: z.boolean().meta({ description: LINK }),
    updated_at: z.int().meta({ description: 'Unix seconds of the last set' }),
  })
  .register(answerShapes, { id: 'TenantIdp' });
