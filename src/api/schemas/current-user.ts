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
  })
  .register(answerShapes, { id: 'CurrentUser' });

export const SessionTenant = z
  .strictObject({
    tenant_id: z.string().min(1).max(128).meta({ description: 'A tenant the user is a member of' }),
  })
  .register(requestShapes, { id: 'SessionTenant' });
