/**
 * Holds a real answer against the OpenAPI document (`src/api/openapi.ts`):
 * the operation the request hits, the status listed for it, the media type,
 * the body against the document's schema for that status (ajv, JSON Schema
 * 2020-12 as OpenAPI 3.1 uses it) and the headers it lists. The document
 * suites (`test/api/openapi*.test.ts`) share it.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect } from 'vitest';
import { openApiDocument } from '../../src/api/openapi.js';
import { fetchWithHost } from './host-request.js';

type Json = Record<string, unknown>;
export interface DocOperation {
  operationId: string;
  responses: Record<string, { content?: Record<string, unknown>; headers?: Json }>;
}

export const DOC = openApiDocument() as { paths: Record<string, Record<string, DocOperation>> };
const ajv = new Ajv2020({ strict: false, validateSchema: false, allErrors: true });
ajv.addSchema(DOC, 'openapi.json');

/** `/1/users/{user_id}/tenants` → `/\/1\/users\/[^/]+\/tenants$/`. */
function pathPattern(template: string): RegExp {
  const escaped = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped.replace(/\{[^}]+\}/g, '[^/]+')}$`);
}

/** The path template of a concrete path; a literal one wins over a template. */
export function templateOf(path: string): string {
  const templates = Object.keys(DOC.paths).filter((t) => pathPattern(t).test(path));
  const template = templates.find((t) => !t.includes('{')) ?? templates[0];
  if (template === undefined) throw new Error(`${path} is not documented`);
  return template;
}

export function operationOf(method: string, path: string): DocOperation {
  const operation = DOC.paths[templateOf(path)]?.[method.toLowerCase()];
  if (operation === undefined) throw new Error(`${method.toUpperCase()} ${path} is not documented`);
  return operation;
}

const escapePointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/** What is wrong with `body` as the document's answer `status` of `method path` in `mediaType`; [] when nothing. */
export function documentErrors(
  method: string,
  path: string,
  status: number,
  mediaType: string,
  body: unknown,
): unknown[] {
  const pointer = `openapi.json#/paths/${escapePointer(templateOf(path))}/${method.toLowerCase()}/responses/${status}/content/${escapePointer(mediaType)}/schema`;
  const validate = ajv.getSchema(pointer) ?? ajv.compile({ $ref: pointer });
  return validate(body) ? [] : (validate.errors ?? []);
}

export interface DocumentedAnswer {
  operationId: string;
  status: number;
  body: unknown;
  headers: Headers;
}

/** Expects `res`, the answer to `method target`, to be as the document says; returns its body. */
export async function expectDocumented(
  method: string,
  target: string,
  res: Response,
): Promise<DocumentedAnswer> {
  const path = target.split('?')[0] as string;
  const operation = operationOf(method, path);
  const text = await res.text();
  const where = `${method} ${target} → ${res.status} ${text.slice(0, 200)}`;
  const response = operation.responses[String(res.status)];
  expect(response, `${where}: a status the document does not list`).toBeDefined();
  let body: unknown;
  if (response?.content === undefined) {
    expect(text, `${where}: the document lists no body`).toBe('');
  } else {
    const mediaType = (res.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
    expect(Object.keys(response.content), where).toContain(mediaType);
    // A page (the sign-in page) is its markup; everything else JSON.
    body = mediaType === 'text/html' ? text : JSON.parse(text);
    expect(documentErrors(method, path, res.status, mediaType, body), where).toEqual([]);
  }
  if (response?.headers?.['X-Request-Id'] !== undefined)
    expect(res.headers.get('x-request-id'), where).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
  for (const name of Object.keys(response?.headers ?? {}))
    if (name !== 'X-Request-Id') expect(res.headers.get(name), `${where}: ${name}`).toBeTruthy();
  return { operationId: operation.operationId, status: res.status, body, headers: res.headers };
}

export interface DocumentedRequest {
  headers?: Record<string, string>;
  /** JSON unless `headers` name another content type. */
  body?: string;
  /** A Host line of the test's choosing (a bodyless request). */
  host?: string;
}

/** Sends `method target` to `base`, a 302 an answer of its own (never followed), and holds the answer against the document. */
export async function documentedCall(
  base: string,
  method: string,
  target: string,
  init: DocumentedRequest = {},
): Promise<DocumentedAnswer> {
  const res =
    init.host !== undefined
      ? await fetchWithHost(base, method, target, init.host)
      : await fetch(`${base}${target}`, {
          method,
          redirect: 'manual',
          headers: {
            ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
            ...init.headers,
          },
          body: init.body,
        });
  return expectDocumented(method, target, res);
}
