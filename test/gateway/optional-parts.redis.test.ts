/**
 * What a start loads (docs/architecture.md, "Start-up cost"): the optional
 * parts' packages — the OpenTelemetry SDK, @simplewebauthn/server, grpc-js
 * and its proto loader, nodemailer, ioredis — are loaded by `serve` only when
 * the config turns their feature on. Each took from 0.1 to 0.4 s of CPU at
 * every start, and the suite starts hundreds of gateways and CLI commands.
 * The module list is recorded by the `--import` hook of
 * test/support/loaded-modules.mjs, in the built gateway as an operator runs it.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { findFreePort } from '../support/ports.js';
import {
  startGatewayProcess,
  stopGatewayProcesses,
  type GatewayProcess,
} from '../support/gateway-process.js';
import { startRedisServer, type TestRedisServer } from '../support/redis-server.js';
import { openSignIn, postForm, SESSIONS } from '../support/sign-in-page.js';

const HOOK = resolve(import.meta.dirname, '../support/loaded-modules.mjs');
const TIMEOUT = 30_000;

/** Each optional part, and what of it shows in the module list. */
const OPTIONAL: Record<string, RegExp> = {
  tracing: /\/node_modules\/@opentelemetry\/(sdk-trace-base|exporter-trace-otlp-http)\//,
  passkeys: /\/node_modules\/@simplewebauthn\/server\//,
  extAuthz: /\/node_modules\/@grpc\/(grpc-js|proto-loader)\//,
  mail: /\/node_modules\/nodemailer\//,
  redis: /\/node_modules\/ioredis\//,
};

let redis: TestRedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
}, TIMEOUT);
afterAll(() => redis?.stop());
afterEach(() => stopGatewayProcesses());

/** Starts `serve` on `config` with the hook; the optional parts whose packages it loaded, once listening. */
async function partsLoaded(config: string): Promise<{ parts: string[]; gw: GatewayProcess }> {
  const list = join(mkdtempSync(join(tmpdir(), 'tg-optional-parts-')), 'loaded-modules.txt');
  const gw = await startGatewayProcess(config, {
    env: { NODE_OPTIONS: `--import=${HOOK}`, TG_LOADED_MODULES: list },
  });
  const loaded = readFileSync(list, 'utf8').split('\n');
  // The record is whole: the composition root the start ran is in it.
  expect(loaded.filter((url) => /\/dist\/gateway\.js$/.test(url))).toHaveLength(1);
  const parts = Object.entries(OPTIONAL).flatMap(([part, pattern]) =>
    loaded.some((url) => pattern.test(url)) ? [part] : [],
  );
  return { parts, gw };
}

describe('serve loads an optional part only when the config turns it on', () => {
  it(
    'a config with none of them: none is loaded',
    async () => {
      const { parts } = await partsLoaded(
        'listen: { host: 127.0.0.1, port: 0 }\nroutes: [{ prefix: /a, upstream: "http://127.0.0.1:9" }]\n',
      );
      expect(parts).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    'a config with all of them: each is loaded, and the gateway serves',
    async () => {
      const closed = await findFreePort();
      const config = JSON.stringify({
        listen: { host: '127.0.0.1', port: 0 },
        forwardAuth: { host: '127.0.0.1', port: 0, grpc: true, grpcPort: 0 },
        store: { redis: { url: redis.url, keyPrefix: `optional-parts-${closed}:` } },
        tracing: { enabled: true, otlpEndpoint: `http://127.0.0.1:${closed}/v1/traces` },
        mail: { smtp: `smtp://127.0.0.1:${closed}`, from: 'Gateway <no-reply@gw.example>' },
        publicUrl: 'http://localhost:8080',
        sessions: SESSIONS,
        mfa: { passkeys: { enabled: true } },
        routes: [{ prefix: '/a', upstream: 'http://127.0.0.1:9' }],
      });
      const { parts, gw } = await partsLoaded(config);
      expect(parts).toEqual(Object.keys(OPTIONAL));
      // The passkey sign-in's options come from the library loaded at start.
      const page = await openSignIn(gw.url);
      const res = await postForm(
        gw.url,
        '/1/sign-in/passkey/options',
        { csrf_token: page.token },
        { cookie: page.preSession, headers: { accept: 'application/json' } },
      );
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ rpId: 'localhost', userVerification: 'required' });
    },
    TIMEOUT,
  );
});
