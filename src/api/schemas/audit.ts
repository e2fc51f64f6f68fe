/** The shapes of a tenant's audit events as its admins read them (`GET /1/tenants/{tenant_id}/audit`). */
import { z } from 'zod';
import { answerShapes } from './registry.js';

export const AuditQuery = z.object({
  type: z
    .string()
    .regex(/^[a-z_]{1,64}$/)
    .optional()
    .meta({ description: 'Only events of this kind (`member_removed`, …)' }),
  since: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .meta({ description: 'Unix seconds: only events at or after it' }),
  until: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .meta({ description: 'Unix seconds: only events before it' }),
  before: z
    .string()
    .regex(/^\d{1,16}-\d{1,16}$/)
    .optional()
    .meta({ description: 'The `next` cursor of the page before: older events only' }),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(200)
    .default(50)
    .meta({ description: 'Events per page, 1 to 200 (default 50)' }),
});

export const AuditEventPage = z
  .strictObject({
    events: z
      .array(z.record(z.string(), z.unknown()))
      .meta({ description: 'The events as recorded (docs/audit.md), newest first' }),
    next: z
      .string()
      .nullable()
      .meta({ description: 'The cursor of the next, older page (`before`); null at the end' }),
    types: z
      .array(z.string())
      .meta({ description: 'The kinds of event present within `since` and `until`, sorted' }),
  })
  .register(answerShapes, { id: 'AuditEventPage' });
