/**
 * The tenant admins' machine-client endpoints on a shared redis-server with
 * two gateway instances: what one instance creates, rotates or removes the
 * other sees at once; Redis holds the secrets' digests only; each change is
 * in the tenant's audit stream as the acting admin, never with a secret.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { secretDigest } from '../../src/auth/secrets.js';
import { tenantStream } from '../../src/store/audit-log.js';
import { bearer, type TestGateway } from '../support/gateway.js';
import {
  ALICE,
  startIdentityFixture,
  tokenFor,
  type RedisIdentityFixture,
} from '../support/identity-fixture.js';

let fx: RedisIdentityFixture;
let other: TestGateway;
let token: string;

beforeAll(async () => {
  // An admin gives a client at most their role's scopes.
  fx = await startIdentityFixture({ authorization: { roles: { admin: ['catalog:read'] } } });
  other = await fx.startAnother();
  token = (await tokenFor(fx.gw.url, ALICE, 'acme')).access_token;
}, 60_000);
afterAll(() => fx.close());

async function call(gw: TestGateway, method: string, path: string, body?: unknown) {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: {
      authorization: bearer(token),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return { status: res.status, body: (text === '' ? undefined : JSON.parse(text)) as any };
}

describe('machine clients on a shared store', () => {
  it('one instance writes, the other reads; Redis keeps digests; the audit names the admin', async () => {
    const created = await call(fx.gw, 'POST', '/1/tenants/acme/clients', {
      name: 'ci',
      scopes: ['catalog:read'],
    });
    expect(created.status).toBe(201);
    const { client_id, client_secret } = created.body;
    const seen = await call(other, 'GET', `/1/tenants/acme/clients/${client_id}`);
    expect([seen.status, seen.body.name]).toEqual([200, 'ci']);

    const rotated = await call(other, 'POST', `/1/tenants/acme/clients/${client_id}/secret`);
    expect(rotated.status).toBe(200);
    const key = await call(fx.gw, 'POST', `/1/tenants/acme/clients/${client_id}/keys`);
    expect(key.status).toBe(201);
    const listed = await call(other, 'GET', `/1/tenants/acme/clients/${client_id}/keys`);
    expect(listed.body.keys.map((k: { key_id: string }) => k.key_id)).toEqual([key.body.key_id]);

    // Everything Redis holds under the fixture's prefix: digests, never a secret.
    const redis = new Redis(fx.redis.url);
    try {
      const prefix = (fx.config.store as { redis: { keyPrefix: string } }).redis.keyPrefix;
      const names = await redis.keys(`${prefix}*`);
      const dump: string[] = [];
      for (const name of names) {
        const type = await redis.type(name);
        if (type === 'hash') dump.push(JSON.stringify(await redis.hgetall(name)));
        else if (type === 'string') dump.push((await redis.get(name)) ?? '');
        else if (type === 'set') dump.push(JSON.stringify(await redis.smembers(name)));
        else if (type === 'stream') dump.push(JSON.stringify(await redis.xrange(name, '-', '+')));
      }
      const text = dump.join('\n');
      expect(text).toContain(secretDigest(rotated.body.client_secret));
      expect(text).toContain(secretDigest(key.body.api_key));
      for (const secret of [client_secret, rotated.body.client_secret, key.body.api_key])
        expect(text).not.toContain(secret);
    } finally {
      redis.disconnect();
    }

    expect((await call(other, 'DELETE', `/1/tenants/acme/clients/${client_id}`)).status).toBe(204);
    expect((await call(fx.gw, 'GET', `/1/tenants/acme/clients/${client_id}`)).status).toBe(404);
    expect(await fx.gw.gateway.store.apiKeys.getApiKey(key.body.key_id)).toBeNull();

    const entries = await fx.gw.gateway.store
      .auditLog({ maxEventsPerStream: 1000 })
      .read(tenantStream('acme'), 0);
    const events = entries
      .map((e) => JSON.parse(e.event) as Record<string, unknown>)
      .filter((e) => e.client_id === client_id);
    expect(events.map((e) => e.event)).toEqual([
      'client_created',
      'client_secret_rotated',
      'api_key_created',
      'client_removed',
    ]);
    for (const e of events) expect(e).toMatchObject({ source: 'api', actor: ALICE.email });
    expect(events.at(-1)).toMatchObject({ key_ids: [key.body.key_id] });
  });
});
