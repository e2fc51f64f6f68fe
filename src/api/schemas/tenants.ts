/** The shapes of tenants: the summary a user's list holds and the token's tenant record. */
import { z } from 'zod';
import { answerShapes, unixSeconds } from './registry.js';

export const TenantType = z
  .enum(['usertenant', 'orgtenant'])
  .register(answerShapes, { id: 'TenantType' });

export const TenantSummary = z
  .strictObject({ tenant_id: z.string(), type: TenantType, name: z.string() })
  .register(answerShapes, { id: 'TenantSummary' });

export const TenantList = z
  .strictObject({ tenants: z.array(TenantSummary) })
  .register(answerShapes, { id: 'TenantList' });

export const Tenant = TenantSummary.extend({
  created_at: unixSeconds(),
  modified_at: unixSeconds(),
  cloud_region: z.string(),
  created_by: z.string().meta({ description: "The creator's e-mail" }),
}).register(answerShapes, { id: 'Tenant' });
