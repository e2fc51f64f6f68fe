/**
 * The OpenAPI schemas of the tenant admins' machine-client endpoints: what a
 * creation sends, and the answers. A secret or key is only in the answer of
 * the operation that made it; lists and reads never carry one.
 */
import { type Json, ref } from './answers.js';

const seconds = (description: string): Json => ({ type: 'integer', description });
const nullableSeconds = (description: string): Json => ({
  type: ['integer', 'null'],
  description,
});
const CLIENT_ID = { type: 'string', pattern: '^tgc_[a-z2-7]{26}$' };
const KEY_ID = { type: 'string', pattern: '^tgkid_[a-z2-7]{16}$' };
const SCOPES = {
  type: 'array',
  items: { type: 'string', pattern: '^[\\x21\\x23-\\x5b\\x5d-\\x7e]+$' },
  description:
    "OAuth scopes (RFC 6749 §3.3), each one of the admin's own role's scopes (`authorization.roles.admin`) and, when set, of `authorization.clientScopes`; any other: 400 `invalid_request`",
};
const EXPIRES_AT = nullableSeconds('Unix seconds; null: never expires');

function object(properties: Json, required = Object.keys(properties)): Json {
  return { type: 'object', additionalProperties: false, required, properties };
}

/** The schemas, to spread into `components.schemas`. */
export function clientSchemas(): Json {
  const client = {
    client_id: CLIENT_ID,
    name: { type: 'string' },
    scopes: { ...SCOPES, description: 'Sorted, without duplicates' },
    created_at: seconds('Unix seconds'),
    expires_at: EXPIRES_AT,
    rotated_at: nullableSeconds('Unix seconds of the last rotation; null: never rotated'),
  };
  const { rotated_at: _, ...created } = client;
  const secret = {
    type: 'string',
    pattern: '^tgs_[A-Za-z0-9_-]{43}$',
    description: 'Shown this once; the gateway keeps only its SHA-256',
  };
  const key = {
    key_id: KEY_ID,
    created_at: seconds('Unix seconds'),
    expires_at: EXPIRES_AT,
  };
  return {
    ClientCreation: object(
      {
        name: { type: 'string', minLength: 1, maxLength: 200 },
        scopes: { ...SCOPES, maxItems: 100 },
        expires_at: seconds('Unix seconds, in the future; omitted: never expires'),
      },
      ['name', 'scopes'],
    ),
    Client: object(client),
    ClientList: object({ clients: { type: 'array', items: ref('Client') } }),
    CreatedClient: object({ ...created, client_secret: secret }),
    RotatedClient: object({ ...client, client_secret: secret }),
    ApiKeyCreation: object(
      { expires_at: seconds('Unix seconds, in the future; omitted: never expires') },
      [],
    ),
    ApiKey: object({
      ...key,
      last_used_at: nullableSeconds('Unix seconds of the last use seen; null: none known'),
    }),
    ApiKeyList: object({ keys: { type: 'array', items: ref('ApiKey') } }),
    CreatedApiKey: object({
      ...key,
      api_key: {
        type: 'string',
        pattern: '^tgk_[a-z2-7]{16}_[A-Za-z0-9_-]{43}_[0-9A-Za-z]{6}$',
        description: 'Shown this once; the gateway keeps only its SHA-256',
      },
    }),
  };
}
