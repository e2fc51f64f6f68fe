/**
 * Only a user manages machine clients: a principal of another kind (a machine
 * client's token, `kind: 'client'`, issue 32) is refused 403 `forbidden`
 * before anything is read, whatever tenant and scopes it holds. The
 * authenticator is a stand-in here (it is the collaborator); the router, the
 * error rendering and the memory store are the real ones.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createIdentityRouter } from '../../src/api/identity-router.js';
import type { IdentityRouterDeps } from '../../src/api/identity/deps.js';
import { renderErrors } from '../../src/api/render-errors.js';
import type { ApiState } from '../../src/api/state.js';
import type { TokenPrincipal } from '../../src/auth/credentials/authenticate.js';
import type { RequestScope } from '../../src/http/scope.js';
import { createMemoryStore } from '../../src/store/memory-store.js';

let server: Server;
let url: string;
let principal: TokenPrincipal;

beforeAll(async () => {
  const store = createMemoryStore();
  const now = Math.floor(Date.now() / 1000);
  await store.tenants.upsertTenant(
    { tenantId: 'acme', type: 'orgtenant', name: 'Acme', cloudRegion: 'eu', createdBy: 'a@x' },
    now,
  );
  const deps = {
    store,
    authenticate: () => principal,
    clientIp: () => '127.0.0.1',
    bodyLimit: 16_384,
    audit: { record: async () => {} },
  } as unknown as IdentityRouterDeps;
  const app = new Koa<ApiState>();
  app.use((ctx, next) => {
    ctx.state.scope = {
      requestId: 't',
      log: pino({ level: 'silent' }),
      route: 'api',
    } as RequestScope;
    return next();
  });
  app.use(renderErrors());
  const router = createIdentityRouter(deps, new Map());
  app.use(router.routes());
  server = createServer(app.callback()).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

it("refuses a machine client's token (403 forbidden), lets a user's through to the role check", async () => {
  const base = {
    userId: 'tgc_aaaaaaaaaaaaaaaaaaaaaaaaaa',
    email: '',
    tenantId: 'acme',
    tenantType: 'orgtenant',
    claims: {},
  } as unknown as TokenPrincipal;
  principal = { ...base, kind: 'client' };
  const refused = await fetch(`${url}/1/tenants/acme/clients`);
  expect(refused.status).toBe(403);
  expect(await refused.json()).toMatchObject({
    error: 'forbidden',
    error_description: "Only a tenant's admins (users) manage its clients.",
  });
  // A user who is no member: refused at the role check instead (another description).
  principal = { ...base, kind: 'user' };
  const user = await fetch(`${url}/1/tenants/acme/clients`);
  expect(user.status).toBe(403);
  expect(await user.json()).toMatchObject({
    error_description: "Only the tenant's admins manage its clients.",
  });
});
