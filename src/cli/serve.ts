/**
 * `serve`: run the gateway. SIGTERM/SIGINT drain and stop (exit 0); SIGHUP
 * re-reads the config file and applies what can change live, keeping the old
 * config when the new one is invalid.
 */
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { readSeedFile } from '../auth/seed.js';
import { loadConfigFile, type LoadedConfig } from '../config/index.js';
import { createGateway, type Gateway } from '../gateway.js';
import { createLogger } from '../ops/logger.js';

export async function serve(loaded: LoadedConfig): Promise<void> {
  const { config } = loaded;
  const log = createLogger(config.log);
  if (loaded.file === undefined)
    log.warn({}, 'no --config or GATEWAY_CONFIG: running on the built-in defaults');
  const file = loaded.file;
  const reloadConfig =
    file === undefined ? undefined : async () => (await loadConfigFile(file)).config;
  const gateway = await createGateway(
    config,
    log,
    reloadConfig === undefined ? {} : { reloadConfig },
  );
  const { main, admin } = await gateway.listen();
  const base = urlOf(main);
  log.info(
    { address: main.address, port: main.port, admin: admin && urlOf(admin), config: file },
    'listening',
  );
  process.stderr.write(`\ntenant-gateway listening on ${base}\n${await tryLine(base, loaded)}\n\n`);

  process.on('SIGHUP', () => void reloadOnSignal(gateway, reloadConfig, log));
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    const drainMs = config.shutdown.drainSeconds * 1000;
    log.info({ signal, drainMs }, 'draining, then stopping');
    gateway.close(drainMs).then(
      () => {
        log.info({}, 'stopped');
        process.exit(0);
      },
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

async function reloadOnSignal(
  gateway: Gateway,
  reloadConfig: (() => Promise<LoadedConfig['config']>) | undefined,
  log: Logger,
) {
  if (reloadConfig === undefined) {
    log.warn({}, 'SIGHUP: no config file to re-read (running on the built-in defaults)');
    return;
  }
  try {
    const { needsRestart } = await gateway.reload(await reloadConfig());
    log.info(
      { needsRestart },
      needsRestart.length > 0 ? 'config reloaded; some keys need a restart' : 'config reloaded',
    );
  } catch (err) {
    log.error({ err }, 'config reload refused: the old config keeps serving');
  }
}

function urlOf(address: AddressInfo): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const shown = host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host;
  return `http://${shown}:${address.port}`;
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
