/**
 * The shapes of the tenant admins' machine clients and their API keys: what
 * a creation sends, and the answers. A secret or key is only in the answer
 * of the operation that made it; lists and reads never carry one.
 */
import { z } from 'zod';
import { SCOPE_PATTERN } from '../../config/schema/authorization.js';
import { answerShapes, requestShapes, unixSeconds } from './registry.js';

const SCOPES_RULE =
  "OAuth scopes (RFC 6749 §3.3), each one of the admin's own role's scopes (`authorization.roles.admin`) and, when set, of `authorization.clientScopes`; any other: 400 `invalid_request`";
const scope = z
  .string()
  .regex(
    SCOPE_PATTERN,
    'each must be an OAuth scope: printable ASCII without spaces, quotes or backslashes',
  );
const futureSeconds = z
  .number()
  .int()
  .positive()
  .optional()
  .meta({ description: 'Unix seconds, in the future; omitted: never expires' });
const nullableSeconds = (description: string) => z.int().nullable().meta({ description });
const secret = (pattern: RegExp) =>
  z
    .string()
    .regex(pattern)
    .meta({ description: 'Shown this once; the gateway keeps only its SHA-256' });

export const ClientCreation = z
  .strictObject({
    name: z.string().trim().min(1).max(200),
    scopes: z.array(scope).max(100).meta({ description: SCOPES_RULE }),
    expires_at: futureSeconds,
  })
  .register(requestShapes, { id: 'ClientCreation' });

export const ApiKeyCreation = z
  .strictObject({ expires_at: futureSeconds })
  .register(requestShapes, { id: 'ApiKeyCreation' });

const created = {
  client_id: z.string().regex(/^tgc_[a-z2-7]{26}$/),
  name: z.string(),
  scopes: z.array(scope).meta({ description: 'Sorted, without duplicates' }),
  created_at: unixSeconds(),
  expires_at: nullableSeconds('Unix seconds; null: never expires'),
};
const clientSecret = secret(/^tgs_[A-Za-z0-9_-]{43}$/);

export const Client = z
  .strictObject({
    ...created,
    rotated_at: nullableSeconds('Unix seconds of the last rotation; null: never rotated'),
  })
  .register(answerShapes, { id: 'Client' });
export const ClientList = z
  .strictObject({ clients: z.array(Client) })
  .register(answerShapes, { id: 'ClientList' });
export const CreatedClient = z
  .strictObject({ ...created, client_secret: clientSecret })
  .register(answerShapes, { id: 'CreatedClient' });
export const RotatedClient = Client.extend({ client_secret: clientSecret }).register(answerShapes, {
  id: 'RotatedClient',
});

const key = {
  key_id: z.string().regex(/^tgkid_[a-z2-7]{16}$/),
  created_at: unixSeconds(),
  expires_at: nullableSeconds('Unix seconds; null: never expires'),
};
export const ApiKey = z
  .strictObject({
    ...key,
    last_used_at: nullableSeconds('Unix seconds of the last use seen; null: none known'),
  })
  .register(answerShapes, { id: 'ApiKey' });
export const ApiKeyList = z
  .strictObject({ keys: z.array(ApiKey) })
  .register(answerShapes, { id: 'ApiKeyList' });
export const CreatedApiKey = z
  .strictObject({
    ...key,
    api_key: secret(/^tgk_[a-z2-7]{16}_[A-Za-z0-9_-]{43}_[0-9A-Za-z]{6}$/),
  })
  .register(answerShapes, { id: 'CreatedApiKey' });
