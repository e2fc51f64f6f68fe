/**
 * The configuration schema: types, defaults and validation in one
 * declaration, composed here from its sections (`schema/`), each written
 * beside its own rules. Every object is strict: an unknown key is an error,
 * reported with the nearest known key (see `load.ts`).
 *
 * Each default is written once, on its key. An omitted section is its keys'
 * defaults (`.prefault({})`); a default another module falls back to is an
 * exported constant the schema uses (`REDIS_DEFAULTS`, `UPSTREAM_POOL_DEFAULTS`)
 * or the section parsed (`STRIP_HEADERS_DEFAULTS`).
 *
 * The order of the keys below is the order of docs/configuration.md.
 */
import { z } from 'zod';
import { apiKeys, authorization, checkApiKeyHeader } from './schema/authorization.js';
import { checkConsole, consoleSection } from './schema/console.js';
import { cors } from './schema/cors.js';
import { demo } from './schema/demo.js';
import { identityHeaders, stripHeaders, trustedProxies } from './schema/headers.js';
import { passwords, revocation, seed, signup, tokens } from './schema/identity.js';
import { checkMail, mail } from './schema/mail.js';
import { checkMfa, mfa } from './schema/mfa.js';
import { publicUrl } from './schema/public-url.js';
import { limits, rateLimits, upstreamPool } from './schema/limits.js';
import { admin, checkListeners, forwardAuth, listen } from './schema/listeners.js';
import {
  checkOpsShadow,
  checkRouteScopesGrantable,
  checkSessionRoutes,
  routes,
} from './schema/routes.js';
import { checkTimeouts, readiness, server, shutdown } from './schema/server.js';
import { sessions } from './schema/sessions.js';
import { sso } from './schema/sso.js';
import { store } from './schema/store.js';
import { audit, log, tracing } from './schema/telemetry.js';

export const configSchema = z
  .strictObject({
    publicUrl,
    listen,
    admin,
    forwardAuth,
    store,
    seed,
    tokens,
    revocation,
    signup,
    mail,
    mfa,
    passwords,
    limits,
    audit,
    server,
    upstreamPool,
    rateLimits,
    trustedProxies,
    identityHeaders,
    stripHeaders,
    routes,
    authorization,
    apiKeys,
    sso,
    sessions,
    console: consoleSection,
    cors,
    log,
    tracing,
    readiness,
    demo,
    shutdown,
  })
  // The rules that read two sections. They run even when other keys are
  // wrong, so that every problem is reported at once; the value may then be
  // partly invalid, hence the defensive reads in each.
  .superRefine(
    (config, ctx) => {
      checkOpsShadow(config, ctx);
      checkRouteScopesGrantable(config, ctx);
      checkSessionRoutes(config, ctx);
      checkApiKeyHeader(config, ctx);
      checkListeners(config, ctx);
      checkTimeouts(config.server, config.limits, ctx);
      checkMail(config, ctx);
      checkMfa(config, ctx);
      checkConsole(config, ctx);
    },
    { when: () => true },
  );

/** The validated configuration, defaults filled in. */
export type GatewayConfig = z.output<typeof configSchema>;
export type RouteConfig = GatewayConfig['routes'][number];
export type RedisConfig = NonNullable<GatewayConfig['store']['redis']>;
export type CorsConfig = NonNullable<GatewayConfig['cors']>;
