/** The shapes of a tenant's e-mail domains: a claim, and a domain as every answer shows it. */
import { z } from 'zod';
import { domainClaimSchema } from '../../auth/federation/tenant-domains.js';
import { answerShapes, requestShapes, unixSeconds } from './registry.js';

export const TenantDomainClaim = domainClaimSchema
  .extend({
    domain: domainClaimSchema.shape.domain.meta({
      description: 'A DNS name such as example.com',
    }),
  })
  .register(requestShapes, { id: 'TenantDomainClaim' });

export const TenantDomain = z
  .strictObject({
    domain: z.string().meta({ description: 'The e-mail domain, lower-case' }),
    verified: z.boolean(),
    verified_at: unixSeconds('Unix seconds; only once verified').optional(),
    txt_name: z.string().optional().meta({
      description:
        'Only while unverified: the DNS name to publish a TXT record at (`_tenant-gateway-challenge.<domain>`)',
    }),
    txt_value: z
      .string()
      .optional()
      .meta({ description: 'Only while unverified: the value of the TXT record' }),
  })
  .register(answerShapes, { id: 'TenantDomain' });

export const TenantDomainList = z
  .strictObject({ domains: z.array(TenantDomain) })
  .register(answerShapes, { id: 'TenantDomainList' });
