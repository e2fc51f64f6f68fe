/**
 * `serve`: run the gateway. SIGTERM/SIGINT drain and stop (exit 0); SIGHUP
 * re-reads the config file and applies what can change live, keeping the old
 * config when the new one is invalid. The log is batched (`log.buffer`) and
 * flushed at start, when a drain begins, and at exit.
 */
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { readSeedFile } from '../auth/seed.js';
import { loadConfigFiles, type LoadedConfig } from '../config/index.js';
import { createGateway, type Gateway } from '../gateway.js';
import { reloadOnSignal } from '../gateway/reload.js';
import { createLogger } from '../ops/logger.js';
import { startDemoUpstream } from './demo-upstream.js';

/** Runs the gateway on a config loaded with the serving checks (`SERVING_CHECKS`). */
export async function serve(loaded: LoadedConfig): Promise<void> {
  const { config } = loaded;
  const log = createLogger(config.log);
  const { files } = loaded;
  if (files.length === 0)
    log.warn({}, 'no --config or GATEWAY_CONFIG: running on the built-in defaults');
  const reloadConfig =
    files.length === 0 ? undefined : async () => (await loadConfigFiles(files)).config;
  const demo =
    config.demo === undefined
      ? undefined
      : await startDemoUpstream(config.demo.echoUpstream.host, config.demo.echoUpstream.port);
  const started = await start(config, log, reloadConfig).catch(async (err: unknown) => {
    // The gateway closed what it had opened; the demo upstream is ours.
    await demo?.close();
    throw err;
  });
  const { gateway } = started;
  const { main, admin, forwardAuth } = started.bound;
  const base = urlOf(main);
  log.info(
    {
      address: main.address,
      port: main.port,
      admin: admin && urlOf(admin),
      forwardAuth: forwardAuth && urlOf(forwardAuth),
      config: files.length === 1 ? files[0] : files,
    },
    'listening',
  );
  log.flush(); // the start is news now, not at the next flush
  const hint = (demo && (await demoLines(base, demo.url, loaded))) ?? (await tryLine(base, loaded));
  const ops = opsLine(admin, config.listen.opsEndpoints ? base : undefined);
  process.stderr.write(`\n${listeningLine(main)}\n${ops}\n${hint}\n\n`);

  process.on('SIGHUP', () => void reloadOnSignal(gateway.reloadFromFile, log));
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    const drainMs = config.shutdown.drainSeconds * 1000;
    log.info({ signal, drainMs }, 'draining, then stopping');
    log.flush();
    gateway.close(drainMs).then(
      async () => {
        await demo?.close();
        log.info({}, 'stopped');
        process.exit(0);
      },
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  // The crash is a log line like any other (the buffer is flushed with it), then exit 1.
  process.on('uncaughtException', (err) => {
    log.fatal({ err }, 'uncaught exception: stopping');
    process.exit(1);
  });
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/**
 * Builds the gateway and binds its listeners: a failure at any step has
 * closed what the start opened, and is logged before it is thrown on.
 */
async function start(
  config: LoadedConfig['config'],
  log: Logger,
  reloadConfig: (() => Promise<LoadedConfig['config']>) | undefined,
): Promise<{ gateway: Gateway; bound: Awaited<ReturnType<Gateway['listen']>> }> {
  try {
    const gateway = await createGateway(
      config,
      log,
      reloadConfig === undefined ? {} : { reloadConfig },
    );
    return { gateway, bound: await gateway.listen() };
  } catch (err) {
    log.fatal({ err }, 'the gateway did not start');
    throw err;
  }
}

/** Where health and metrics are: the admin listener, never the public one unless asked for. */
function opsLine(admin: AddressInfo | undefined, onListen: string | undefined): string {
  const at = admin === undefined ? onListen : urlOf(admin);
  if (at === undefined)
    return 'health and metrics: not served (the config has no `admin` listener; see docs/operations.md)';
  const where = admin === undefined ? 'listen.opsEndpoints' : 'the admin listener';
  const everywhere =
    admin !== undefined && isWildcard(admin) ? ', bound to every network interface' : '';
  return `health and metrics: ${at}/healthz, ${at}/readyz, ${at}/metrics (${where}${everywhere})`;
}

/**
 * The banner's first line: the URL to paste, or — bound to every interface
 * (`0.0.0.0`, `::`) — the address actually bound, said so, then the URL
 * that reaches it from this machine.
 */
function listeningLine(main: AddressInfo): string {
  if (!isWildcard(main)) return `tenant-gateway listening on ${urlOf(main)}`;
  return `tenant-gateway listening on ${hostPort(main)} (every network interface: reachable from other machines); from this machine: ${urlOf(main)}`;
}

function isWildcard(address: AddressInfo): boolean {
  return address.address === '0.0.0.0' || address.address === '::';
}

function hostPort(address: AddressInfo): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `${host}:${address.port}`;
}

/** The URL that reaches a listener from this machine (loopback for a wildcard address). */
function urlOf(address: AddressInfo): string {
  if (!isWildcard(address)) return `http://${hostPort(address)}`;
  return `http://${address.address === '::' ? '[::1]' : '127.0.0.1'}:${address.port}`;
}

/**
 * The demo's lines, to paste in order: a token, a proxied request whose echo
 * shows the injected identity headers, a tenant mismatch (403), no token
 * (401). They carry the demo seed's password: those passwords are public
 * (config/demo-seed.yaml), and this runs only for a config with `demo`.
 */
async function demoLines(
  base: string,
  echoUrl: string,
  loaded: LoadedConfig,
): Promise<string | undefined> {
  const { config } = loaded;
  const route = config.routes.find((r) => r.upstream?.startsWith(echoUrl));
  if (config.seed === undefined || route === undefined) return undefined;
  const seed = await readSeedFile(config.seed);
  const user = seed.users[0];
  const email = user?.email.toLowerCase();
  const isMember = (t: (typeof seed.tenants)[number]) =>
    t.members.some((m) => m.toLowerCase() === email);
  const member = seed.tenants.find(isMember);
  const other = seed.tenants.find((t) => !isMember(t));
  if (user?.password === undefined || member === undefined || other === undefined) return undefined;
  const header = route.tenant?.header ?? 'X-Tenant-Id';
  const url = `${base}${route.prefix.replace(/\/+$/, '')}/hello`;
  return [
    `The demo proxies ${route.prefix} to a built-in echo upstream (${echoUrl}). Paste these in order:`,
    '',
    `TOKEN=$(curl -s -u '${user.email}:${user.password}' '${base}/1/token?tenant_id=${member.tenant_id}' | node -pe 'JSON.parse(require("fs").readFileSync(0)).access_token')`,
    `curl -s -H "Authorization: Bearer $TOKEN" -H '${header}: ${member.tenant_id}' -H 'X-User-Id: spoofed' ${url}   # 200: the echo shows the identity headers the gateway set`,
    `curl -s -i -H "Authorization: Bearer $TOKEN" -H '${header}: ${other.tenant_id}' ${url}   # 403 tenant_mismatch`,
    `curl -s -i ${url}   # 401 invalid_token: no token`,
  ].join('\n');
}

/** A curl line a newcomer can paste (curl asks for the password: none is printed). */
async function tryLine(base: string, loaded: LoadedConfig): Promise<string> {
  const { config } = loaded;
  if (config.seed !== undefined) {
    const seed = await readSeedFile(config.seed);
    const user = seed.users[0];
    if (user !== undefined) {
      return `try:  curl -u ${user.email} ${base}/1/users/current/tenants   (curl asks for the password; the seed file has it)`;
    }
  }
  if (config.signup.enabled) {
    return `try:  curl -X POST -H 'content-type: application/json' -d '{"email":"you@example.com","password":"choose-a-password"}' ${base}/1/users`;
  }
  return `try:  curl ${base}/.well-known/jwks.json`;
}
