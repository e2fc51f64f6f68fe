#!/usr/bin/env node
/** The command line (DESIGN §4). Passwords are read from stdin or an env var, never argv. */
import { Command } from 'commander';
import { KeyLoadError } from './auth/keys.js';
import { readSeedFile, SeedError } from './auth/seed.js';
import { ConfigError, loadConfigFile, type LoadedConfig } from './config/index.js';
import { isGatewayError } from './errors.js';
import * as admin from './cli/admin.js';
import { resolveConfig } from './cli/config-option.js';
import { serve } from './cli/serve.js';
import { UsageError } from './cli/usage-error.js';

interface ConfigOptions {
  config?: string;
}

/** Adds `--config F` to a command that runs against a configuration. */
function configurable(command: Command): Command {
  return command.option(
    '-c, --config <file>',
    'config file (default: $GATEWAY_CONFIG, else built-in defaults)',
  );
}

/** The configuration `command` runs with: --config, else $GATEWAY_CONFIG, else the defaults. */
function configOf(command: Command): Promise<LoadedConfig> {
  return resolveConfig(command.optsWithGlobals<ConfigOptions>().config);
}

const program = new Command('tenant-gateway')
  .description('Authenticating reverse proxy for multi-tenant APIs')
  .showHelpAfterError();

configurable(program.command('serve').description('run the gateway')).action(
  async (_options: ConfigOptions, command: Command) => serve(await configOf(command)),
);

configurable(
  program
    .command('seed <file>')
    .description('upsert the users and tenants of a seed file into the store (idempotent)'),
).action(async (file: string, _options: ConfigOptions, command: Command) =>
  admin.seedCommand(await configOf(command), file),
);

program
  .command('config')
  .description('configuration commands')
  .command('check [file]')
  .description('validate a config file and the seed file it names (default: $GATEWAY_CONFIG)')
  .action(async (file: string | undefined) => {
    const path = file ?? process.env.GATEWAY_CONFIG;
    if (path === undefined || path === '') {
      throw new UsageError('name a config file or set GATEWAY_CONFIG');
    }
    const { config, file: checked } = await loadConfigFile(path);
    process.stdout.write(`ok: ${checked}\n`);
    if (config.seed !== undefined) {
      await readSeedFile(config.seed);
      process.stdout.write(`ok: ${config.seed}\n`);
    }
  });

const user = program.command('user').description('manage users');
configurable(
  user
    .command('add <email>')
    .description(
      'create a user and its personal tenant (password from stdin, or --password-env VAR)',
    )
    .option('--name <name>', 'display name')
    .option('--password-env <var>', 'read the password from this environment variable'),
).action(
  async (email: string, options: admin.PasswordOptions & { name?: string }, command: Command) =>
    admin.userAdd(await configOf(command), email, options),
);
configurable(
  user
    .command('password <email>')
    .description("set a user's password and end all their sessions (stdin, or --password-env VAR)")
    .option('--password-env <var>', 'read the password from this environment variable'),
).action(async (email: string, options: admin.PasswordOptions, command: Command) =>
  admin.userPassword(await configOf(command), email, options),
);
configurable(user.command('list').description('list users')).action(
  async (_options: ConfigOptions, command: Command) => admin.userList(await configOf(command)),
);

const tenant = program.command('tenant').description('manage org tenants');
configurable(
  tenant
    .command('add <tenant_id>')
    .description('create or update an org tenant')
    .requiredOption('--name <name>', 'display name')
    .requiredOption('--region <region>', 'cloud region')
    .requiredOption('--created-by <email>', "creator's e-mail"),
).action(async (tenantId: string, options: admin.TenantOptions, command: Command) =>
  admin.tenantAdd(await configOf(command), tenantId, options),
);
configurable(tenant.command('list').description('list tenants')).action(
  async (_options: ConfigOptions, command: Command) => admin.tenantList(await configOf(command)),
);

const member = program.command('member').description('manage org tenant memberships');
for (const change of ['add', 'remove'] as const) {
  configurable(
    member.command(`${change} <tenant_id> <email>`).description(`${change} a member`),
  ).action(async (tenantId: string, email: string, _options: ConfigOptions, command: Command) =>
    admin.memberChange(await configOf(command), change, tenantId, email),
  );
}
configurable(member.command('list <tenant_id>').description("list a tenant's members")).action(
  async (tenantId: string, _options: ConfigOptions, command: Command) =>
    admin.memberList(await configOf(command), tenantId),
);

configurable(
  program
    .command('keys')
    .description('signing keys')
    .command('add')
    .description('add a new signing key to tokens.keys (it signs after the next start or reload)'),
).action(async (_options: ConfigOptions, command: Command) =>
  admin.keysAdd(await configOf(command)),
);

program.parseAsync().catch((err: unknown) => {
  const expected =
    err instanceof ConfigError ||
    err instanceof SeedError ||
    err instanceof KeyLoadError ||
    err instanceof UsageError;
  if (expected) process.stderr.write(`error: ${err.message}\n`);
  else if (isGatewayError(err)) process.stderr.write(`error: ${err.code}: ${err.message}\n`);
  else process.stderr.write(`error: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
