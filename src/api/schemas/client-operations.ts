/**
 * The operations of the tenant admins' machine clients
 * (`/1/tenants/{tenant_id}/clients…`): a secret or key is in one answer only
 * (`no-store`).
 */
import { z } from 'zod';
import { adminOperation, NO_STORE, TENANT_GONE, type AdminOperation } from './admin-operation.js';
import {
  ApiKeyCreation,
  ApiKeyList,
  ClientCreation,
  ClientList,
  CreatedApiKey,
  CreatedClient,
  Client,
  RotatedClient,
} from './clients.js';
import { answer, type Operation } from './operation.js';
import { BAD_INPUT, tenantIdParam, TOO_LARGE } from './refusals.js';

const CLIENTS = '/1/tenants/{tenant_id}/clients';
const CLIENT = `${CLIENTS}/{client_id}`;
const clientParams = tenantIdParam.extend({
  client_id: z
    .string()
    .meta({ description: "A client of the tenant (`tgc_…`); another tenant's is not found." }),
});
const keyParams = clientParams.extend({
  key_id: z.string().meta({ description: 'A key of the client (`tgkid_…`).' }),
});
const NO_CLIENT = 'The tenant has no such client (or no longer exists).';
const CREDENTIAL_FORBIDDEN =
  'or, for a new secret or API key, the client holds a scope the admin may not give (`forbidden`: only the operator gives it a new credential).';

const clientOperation = (op: Omit<AdminOperation, 'tags' | 'forbiddenToo'>): Operation =>
  adminOperation({ ...op, tags: ['clients'], forbiddenToo: CREDENTIAL_FORBIDDEN });

export const listClients = clientOperation({
  method: 'get',
  path: CLIENTS,
  operationId: 'listClients',
  summary: "The tenant's machine clients, sorted by client_id (never a secret)",
  params: tenantIdParam,
  answers: { 200: answer("The tenant's clients.", ClientList) },
  notFound: TENANT_GONE,
});

export const createClient = clientOperation({
  method: 'post',
  path: CLIENTS,
  operationId: 'createClient',
  summary: 'Create a machine client: its secret is in this answer only',
  params: tenantIdParam,
  body: { schema: ClientCreation, required: true },
  answers: {
    201: answer('The new client and its secret.', CreatedClient, {
      ...NO_STORE,
      Location: { schema: { type: 'string' }, description: "The client's path." },
    }),
  },
  refusals: { 400: BAD_INPUT, 413: TOO_LARGE },
  notFound: TENANT_GONE,
});

export const getClient = clientOperation({
  method: 'get',
  path: CLIENT,
  operationId: 'getClient',
  summary: 'A machine client of the tenant (never its secret)',
  params: clientParams,
  answers: { 200: answer('The client.', Client) },
  notFound: NO_CLIENT,
});

export const removeClient = clientOperation({
  method: 'delete',
  path: CLIENT,
  operationId: 'removeClient',
  summary: 'Remove a machine client and its keys: what they covered ends on every instance first',
  params: clientParams,
  answers: { 204: { description: 'Removed, with its keys.' } },
  notFound: NO_CLIENT,
});

export const rotateClientSecret = clientOperation({
  method: 'post',
  path: `${CLIENT}/secret`,
  operationId: 'rotateClientSecret',
  summary:
    'A new secret for the client (in this answer only); the old one ends on every instance first',
  params: clientParams,
  answers: { 200: answer('The client and its new secret.', RotatedClient, NO_STORE) },
  notFound: NO_CLIENT,
});

export const listApiKeys = clientOperation({
  method: 'get',
  path: `${CLIENT}/keys`,
  operationId: 'listApiKeys',
  summary: "The client's API keys, sorted by key_id (never a key)",
  params: clientParams,
  answers: { 200: answer("The client's keys.", ApiKeyList) },
  notFound: NO_CLIENT,
});

export const createApiKey = clientOperation({
  method: 'post',
  path: `${CLIENT}/keys`,
  operationId: 'createApiKey',
  summary: 'Add an API key to the client: the key is in this answer only',
  params: clientParams,
  body: { schema: ApiKeyCreation, required: false },
  answers: { 201: answer('The new key.', CreatedApiKey, NO_STORE) },
  refusals: { 400: BAD_INPUT, 413: TOO_LARGE },
  notFound: NO_CLIENT,
});

export const removeApiKey = clientOperation({
  method: 'delete',
  path: `${CLIENT}/keys/{key_id}`,
  operationId: 'removeApiKey',
  summary: 'Remove an API key of the client: it ends on every instance first',
  params: keyParams,
  answers: { 204: { description: 'Removed.' } },
  notFound: 'The tenant has no such client, or the client no such key.',
});
