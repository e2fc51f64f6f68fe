/**
 * The browser-session scenario of `npm run bench:instructions` (issue 44): a
 * proxied request admitted by a session cookie, to compare with one admitted
 * by a bearer token (target, `gateway`). Its gateway runs the bench's config
 * with `sessions.enabled` and a second route, `auth: session`, like the first
 * (same upstream, same tenant header rule); the request is the bench's, to
 * that route, with the cookie of a session begun for the bench user on the
 * bench's Redis (by the core, as the sign-in page begins one) instead of the
 * token. Target: within +5 % instructions of the bearer's.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import pino from 'pino';
import { parse, stringify } from 'yaml';
import { sessionCookieName } from '../src/config/schema/sessions.js';
import { parseConfigText } from '../src/config/index.js';
import { createCore } from '../src/core/create-core.js';
import type { Backends, ComparedProxy } from './backends.js';
import { BENCH_TENANT, BENCH_USER, REQUEST_PATH, ROUTE_PREFIX } from './gateway-config.js';
import { findFreePort } from './processes.js';

/** Where the session route is mounted: the bench's request path under it. */
const SESSION_PREFIX = '/app';

/** The session gateway, its config written beside the bench's, and its request's headers. */
export async function sessionProxy(backends: Backends): Promise<ComparedProxy> {
  const base = parse(readFileSync(backends.files.configFile, 'utf8')) as Record<string, unknown>;
  const port = await findFreePort();
  const routes = base.routes as Record<string, unknown>[];
  const config = {
    ...base,
    listen: { host: '127.0.0.1', port },
    sessions: { enabled: true },
    routes: [...routes, { ...routes[0], prefix: SESSION_PREFIX, auth: 'session' }],
  };
  const configFile = backends.files.configFile.replace(/\.yaml$/, '-sessions.yaml');
  const text = stringify(config);
  writeFileSync(configFile, text);
  const cookie = await beginSession(text);
  return {
    name: 'gateway (session)',
    port,
    nodeArgs: ['dist/cli.js', 'serve', '--config', configFile],
    path: `${SESSION_PREFIX}${REQUEST_PATH.slice(ROUTE_PREFIX.length)}`,
    headers: {
      cookie: `${sessionCookieName(parseConfigText(text, configFile, {}).sessions)}=${cookie}`,
      'x-tenant-id': BENCH_TENANT,
    },
  };
}

/** A session of the bench user for the bench tenant, in the bench's store: its cookie's value. */
async function beginSession(configText: string): Promise<string> {
  const config = parseConfigText(configText, 'bench', {});
  const core = await createCore(config, pino({ level: 'silent' }));
  try {
    const user = await core.store.users.findUserByEmail(BENCH_USER.email);
    if (user === null) throw new Error(`${BENCH_USER.email} is not seeded`);
    const started = await core.browserSessions.start({
      userId: user.id,
      tenantId: BENCH_TENANT,
      userAgent: 'bench',
      ip: '127.0.0.1',
    });
    return started.cookieValue;
  } finally {
    await core.close();
  }
}
