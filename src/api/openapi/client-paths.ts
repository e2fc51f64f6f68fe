/**
 * OpenAPI operations of the tenant admins' machine clients
 * (`/1/tenants/{tenant_id}/clients…`): the caller is a user, admin of the
 * token's tenant; a secret or key is in one answer only (`no-store`).
 */
import {
  BAD_INPUT,
  BEARER_REFUSED,
  BUG,
  type Json,
  json,
  ref,
  refusal,
  REQUEST_ID_HEADER,
  STORE_DOWN,
  TOO_LARGE,
} from './answers.js';

const tenantIdParameter = {
  name: 'tenant_id',
  in: 'path',
  required: true,
  description: "The token's tenant id, or `current`.",
  schema: { type: 'string' },
};
const clientIdParameter = {
  name: 'client_id',
  in: 'path',
  required: true,
  description: "A client of the tenant (`tgc_…`); another tenant's is not found.",
  schema: { type: 'string' },
};
const keyIdParameter = {
  name: 'key_id',
  in: 'path',
  required: true,
  description: 'A key of the client (`tgkid_…`).',
  schema: { type: 'string' },
};

const NO_STORE = { 'Cache-Control': { schema: { const: 'no-store' } } };

/** The refusals every operation gives; `notFound` says what is not found. */
function refusals(notFound: string): Json {
  return {
    '401': BEARER_REFUSED,
    '403': refusal(
      "The path names a tenant other than the token's (`tenant_mismatch`); or the caller is not, now, an admin of the tenant, is not a user, or the tenant is a personal one (`forbidden`); or, for a new secret or API key, the client holds a scope the admin may not give (`forbidden`: only the operator gives it a new credential).",
      'tenant_mismatch',
      'forbidden',
    ),
    '404': refusal(notFound, 'not_found'),
    '500': BUG,
    '503': STORE_DOWN,
  };
}

const TENANT_GONE = 'The tenant was removed after the token was issued.';
const NO_CLIENT = 'The tenant has no such client (or no longer exists).';

function operation(
  operationId: string,
  summary: string,
  parameters: Json[],
  responses: Json,
  notFound: string,
  requestBody?: Json,
): Json {
  return {
    operationId,
    summary,
    tags: ['clients'],
    security: [{ bearer: [] }],
    parameters,
    ...(requestBody === undefined ? {} : { requestBody }),
    responses: { ...responses, ...refusals(notFound) },
  };
}

const answer = (description: string, schema: string, headers: Json = {}): Json => ({
  description,
  headers: { ...REQUEST_ID_HEADER, ...headers },
  content: json(ref(schema)),
});

/** `/1/tenants/{tenant_id}/clients` */
export function clientsPath(): Json {
  return {
    get: operation(
      'listClients',
      "The tenant's machine clients, sorted by client_id (never a secret)",
      [tenantIdParameter],
      { '200': answer("The tenant's clients.", 'ClientList') },
      TENANT_GONE,
    ),
    post: operation(
      'createClient',
      'Create a machine client: its secret is in this answer only',
      [tenantIdParameter],
      {
        '201': answer('The new client and its secret.', 'CreatedClient', {
          ...NO_STORE,
          Location: { schema: { type: 'string' }, description: "The client's path." },
        }),
        '400': BAD_INPUT,
        '413': TOO_LARGE,
      },
      TENANT_GONE,
      { required: true, content: json(ref('ClientCreation')) },
    ),
  };
}

/** `/1/tenants/{tenant_id}/clients/{client_id}` */
export function clientPath(): Json {
  const parameters = [tenantIdParameter, clientIdParameter];
  return {
    get: operation(
      'getClient',
      'A machine client of the tenant (never its secret)',
      parameters,
      { '200': answer('The client.', 'Client') },
      NO_CLIENT,
    ),
    delete: operation(
      'removeClient',
      'Remove a machine client and its keys: what they covered ends on every instance first',
      parameters,
      { '204': { description: 'Removed, with its keys.' } },
      NO_CLIENT,
    ),
  };
}

/** `/1/tenants/{tenant_id}/clients/{client_id}/secret` */
export function clientSecretPath(): Json {
  return {
    post: operation(
      'rotateClientSecret',
      'A new secret for the client (in this answer only); the old one ends on every instance first',
      [tenantIdParameter, clientIdParameter],
      { '200': answer('The client and its new secret.', 'RotatedClient', NO_STORE) },
      NO_CLIENT,
    ),
  };
}

/** `/1/tenants/{tenant_id}/clients/{client_id}/keys` */
export function clientKeysPath(): Json {
  const parameters = [tenantIdParameter, clientIdParameter];
  return {
    get: operation(
      'listApiKeys',
      "The client's API keys, sorted by key_id (never a key)",
      parameters,
      { '200': answer("The client's keys.", 'ApiKeyList') },
      NO_CLIENT,
    ),
    post: operation(
      'createApiKey',
      'Add an API key to the client: the key is in this answer only',
      parameters,
      {
        '201': answer('The new key.', 'CreatedApiKey', NO_STORE),
        '400': BAD_INPUT,
        '413': TOO_LARGE,
      },
      NO_CLIENT,
      { required: false, content: json(ref('ApiKeyCreation')) },
    ),
  };
}

/** `/1/tenants/{tenant_id}/clients/{client_id}/keys/{key_id}` */
export function clientKeyPath(): Json {
  return {
    delete: operation(
      'removeApiKey',
      'Remove an API key of the client: it ends on every instance first',
      [tenantIdParameter, clientIdParameter, keyIdParameter],
      { '204': { description: 'Removed.' } },
      'The tenant has no such client, or the client no such key.',
    ),
  };
}
