/** The shapes of the caller as a front end shows them (`GET /1/users/current`, the console). */
import { z } from 'zod';
import { answerShapes, requestShapes } from './registry.js';

const role = z.enum(['admin', 'member']);
const tenantType = z.enum(['usertenant', 'orgtenant']);

export const CurrentUser = z
  .strictObject({
    user_id: z.string(),
    user_email: z.string(),
    tenant_id: z.string().meta({ description: "The session's or token's tenant" }),
    tenant_name: z.string(),
    tenant_type: tenantType,
    role: role.meta({ description: 'The role in that tenant, as the store says now' }),
    scopes: z.array(z.string()).meta({ description: "The session's or token's scopes" }),
    tenants: z
      .array(z.strictObject({ tenant_id: z.string(), type: tenantType, name: z.string(), role }))
      .meta({ description: 'Every tenant of the user, with their role there' }),
    second_factors: z
      .strictObject({
        totp: z
          .strictObject({
            enrolled: z.boolean().meta({ description: 'A confirmed TOTP factor' }),
            recovery_codes_left: z.int().nullable().meta({
              description: 'Recovery codes not used yet; null without a confirmed factor',
            }),
          })
          .nullable()
          .meta({ description: 'null: TOTP is off on this gateway (`mfa.totp.enabled`)' }),
        passkeys: z
          .strictObject({ count: z.int().meta({ description: "The user's passkeys" }) })
          .nullable()
          .meta({
            description: 'null: passkeys are off on this gateway (`mfa.passkeys.enabled`)',
          }),
      })
      .meta({ description: "The user's second factors, where the gateway offers them" }),
  })
  .register(answerShapes, { id: 'CurrentUser' });

export const SessionTenant = z
  .strictObject({
    tenant_id: z.string().min(1).max(128).meta({ description: 'A tenant the user is a member of' }),
  })
  .register(requestShapes, { id: 'SessionTenant' });
