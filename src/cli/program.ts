/**
 * The command tree of the command line (docs/command-line.md), made afresh for
 * each run: `runCli` (run.ts) parses one argv with it. Passwords are read from
 * stdin or an env var, never argv.
 */
import { Command } from 'commander';
import { seedFileProblems } from '../auth/seed.js';
import { loadConfigFiles, type LoadedConfig, type LoadOptions } from '../config/index.js';
import { VERSION } from '../version.js';
import * as admin from './admin.js';
import * as apiKeys from './api-keys.js';
import * as clients from './clients.js';
import * as domains from './domains.js';
import * as idps from './idps.js';
import * as members from './members.js';
import { sessionEndCommand, sessionListCommand } from './sessions.js';
import { userShow } from './user-show.js';
import { addUserMfa } from './user-mfa.js';
import { auditTail, type TailOptions } from './audit.js';
import { resolveConfig } from './config-option.js';
import { health } from './health.js';
import { keysAdd, keysList, keysRetire } from './keys.js';
import { UsageError } from './usage-error.js';
import { cliIo } from './io.js';

interface ConfigOptions {
  config?: string[];
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** Adds `--config F` (repeatable: layered) to a command that runs against a configuration. */
function configurable(command: Command): Command {
  return command.option(
    '-c, --config <file>',
    'config file; repeat it to layer files, later over earlier (default: $GATEWAY_CONFIG, else built-in defaults)',
    collect,
  );
}

/** The configuration `command` runs with: --config, else $GATEWAY_CONFIG, else the defaults. */
function configOf(command: Command, options: LoadOptions = {}): Promise<LoadedConfig> {
  return resolveConfig(command.optsWithGlobals<ConfigOptions>().config, options);
}

/**
 * What `serve` and `config check` also check before anything starts: the
 * `tokens.keys` folder and the seed file, in the one list of problems.
 */
const SERVING_CHECKS: LoadOptions = { serving: { seedProblems: seedFileProblems } };

/** A new `tenant-gateway` command tree; its output and exits go through `cliIo()`. */
export function buildProgram(): Command {
  const program = new Command('tenant-gateway')
    .description('Authenticating reverse proxy for multi-tenant APIs')
    .version(VERSION, '--version', 'print the version')
    .showHelpAfterError()
    // Help, --version and usage errors are written to the run's io and end the
    // run (CommanderError), not the process: runCli turns them into its exit code.
    .configureOutput({
      writeOut: (text) => void cliIo().stdout.write(text),
      writeErr: (text) => void cliIo().stderr.write(text),
    })
    .exitOverride();
  addServeAndConfig(program);
  addUsers(program);
  const tenant = addTenants(program);
  addIdps(tenant);
  addDomains(tenant);
  addMembers(program);
  addSessions(program);
  addClients(program);
  addKeys(program);
  addAuditAndHealth(program);
  return program;
}

/** `serve`, `seed` and `config check`. */
function addServeAndConfig(program: Command): void {
  // Loaded only to serve: the serving path (Koa, the proxy, undici, metrics,
  // tracing) would add ~0.15 s to the start of every other command.
  configurable(program.command('serve').description('run the gateway')).action(
    async (_options: ConfigOptions, command: Command) => {
      const loaded = await configOf(command, SERVING_CHECKS);
      const { serve } = await import('./serve.js');
      await serve(loaded);
    },
  );

  configurable(
    program
      .command('seed <file>')
      .description('upsert the users and tenants of a seed file into the store (idempotent)'),
  ).action(async (file: string, _options: ConfigOptions, command: Command) =>
    admin.seedCommand(await configOf(command), file),
  );

  configurable(
    program
      .command('config')
      .description('configuration commands')
      .command('check [file]')
      .description('validate a config (its layers with --config) and the seed file it names'),
  ).action(async (file: string | undefined, options: ConfigOptions) => {
    const files = [...(file === undefined ? [] : [file]), ...(options.config ?? [])];
    const io = cliIo();
    const env = io.env.GATEWAY_CONFIG;
    if (files.length === 0 && env !== undefined && env !== '') files.push(env);
    if (files.length === 0) throw new UsageError('name a config file or set GATEWAY_CONFIG');
    // Every problem of the config, its variables, its files and its seed, in one run.
    const { config, files: checked } = await loadConfigFiles(files, io.env, SERVING_CHECKS);
    io.stdout.write(`ok: ${checked.join(' + ')}\n`);
    if (config.seed !== undefined) io.stdout.write(`ok: ${config.seed}\n`);
  });
}

function addUsers(program: Command): void {
  const user = program.command('user').description('manage users');
  configurable(
    user
      .command('add <email>')
      .description(
        'create a user and its personal tenant (password from stdin, or --password-env VAR)',
      )
      .option('--name <name>', 'display name')
      .option(
        '--verified',
        'the address is known to be the person’s: their password signs in with `signup.verifyEmail`, and an IdP may link them',
      )
      .option('--password-env <var>', 'read the password from this environment variable'),
  ).action(
    async (
      email: string,
      options: admin.PasswordOptions & { name?: string; verified?: boolean },
      command: Command,
    ) => admin.userAdd(await configOf(command), email, options),
  );
  configurable(
    user
      .command('password <email>')
      .description(
        "set a user's password and end all their sessions (stdin, or --password-env VAR)",
      )
      .option('--password-env <var>', 'read the password from this environment variable'),
  ).action(async (email: string, options: admin.PasswordOptions, command: Command) =>
    admin.userPassword(await configOf(command), email, options),
  );
  for (const disabled of [true, false]) {
    configurable(
      user
        .command(`${disabled ? 'disable' : 'enable'} <email>`)
        .description(
          disabled
            ? 'refuse the user’s logins and end every session of theirs, on every instance'
            : 'let a disabled user log in again (their old tokens stay refused)',
        ),
    ).action(async (email: string, _options: ConfigOptions, command: Command) =>
      admin.userSetDisabled(await configOf(command), email, disabled),
    );
  }
  configurable(
    user
      .command('remove <email>')
      .description(
        'remove a user, their personal tenant and memberships; their sessions end on every instance',
      ),
  ).action(async (email: string, _options: ConfigOptions, command: Command) =>
    admin.userRemove(await configOf(command), email),
  );
  configurable(user.command('list').description('list users')).action(
    async (_options: ConfigOptions, command: Command) => admin.userList(await configOf(command)),
  );
  configurable(
    user
      .command('show <email>')
      .description('a user: account, memberships and roles, live sessions, sign-in factors'),
  ).action(async (email: string, _options: ConfigOptions, command: Command) =>
    userShow(await configOf(command), email),
  );
  addUserMfa(user, configurable, (command) => configOf(command));
}

/** `session list` and `session end`: users' browser sessions and refresh-token logins. */
function addSessions(program: Command): void {
  const session = program
    .command('session')
    .description("users' sessions: browser sessions and refresh-token logins");
  configurable(
    session
      .command('list <email>')
      .description("the user's live sessions, newest first (ids, never a secret)"),
  ).action(async (email: string, _options: ConfigOptions, command: Command) =>
    sessionListCommand(await configOf(command), email),
  );
  configurable(
    session
      .command('end <session_id>')
      .description('end one session of any user, on every instance before it returns'),
  ).action(async (sessionId: string, _options: ConfigOptions, command: Command) =>
    sessionEndCommand(await configOf(command), sessionId),
  );
}

function addTenants(program: Command): Command {
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

  configurable(
    tenant
      .command('remove <tenant_id>')
      .description(
        "remove an org tenant and its memberships; members' sessions for it end on every instance",
      ),
  ).action(async (tenantId: string, _options: ConfigOptions, command: Command) =>
    admin.tenantRemove(await configOf(command), tenantId),
  );
  return tenant;
}

function addIdps(tenant: Command): void {
  const idp = tenant
    .command('idp')
    .description("an org tenant's identity provider (OIDC sign-in; the secret is never printed)");
  configurable(
    idp
      .command('set <tenant_id>')
      .description(
        `set the tenant's identity provider, whole (client secret: --client-secret-stdin or $${idps.IDP_SECRET_ENV}; none given: kept while issuer and client id stay)`,
      )
      .requiredOption(
        '--issuer <url>',
        "the IdP's issuer, exactly as its tokens name it (https://)",
      )
      .requiredOption('--client-id <id>', "the gateway's client id at the IdP")
      .requiredOption('--domains <domains>', 'comma-separated e-mail domains it may sign in')
      .option('--role <role>', 'admin or member (default): the role given at first sign-in')
      .option('--link-existing', 'a local user with the same verified e-mail may be linked')
      .option('--client-secret-stdin', 'read the client secret from stdin')
      .option('--remove-client-secret', 'keep no client secret'),
  ).action(async (tenantId: string, options: idps.IdpSetOptions, command: Command) =>
    idps.idpSet(await configOf(command), tenantId, options),
  );
  configurable(
    idp.command('show <tenant_id>').description("print the tenant's identity provider (no secret)"),
  ).action(async (tenantId: string, _options: ConfigOptions, command: Command) =>
    idps.idpShow(await configOf(command), tenantId),
  );
  configurable(
    idp.command('remove <tenant_id>').description("remove the tenant's identity provider"),
  ).action(async (tenantId: string, _options: ConfigOptions, command: Command) =>
    idps.idpRemove(await configOf(command), tenantId),
  );
}

function addDomains(tenant: Command): void {
  const domain = tenant
    .command('domain')
    .description("an org tenant's e-mail domains: an IdP signs in only for verified ones");
  configurable(
    domain
      .command('add <tenant_id> <domain>')
      .description('add a domain: prints the DNS TXT record that proves it (txt_name, txt_value)')
      .option('--verified', 'the operator vouches for it: verified at once, no DNS asked'),
  ).action(
    async (tenantId: string, name: string, options: { verified?: boolean }, command: Command) =>
      domains.domainAdd(await configOf(command), tenantId, name, options),
  );
  configurable(domain.command('list <tenant_id>').description("list the tenant's domains")).action(
    async (tenantId: string, _options: ConfigOptions, command: Command) =>
      domains.domainList(await configOf(command), tenantId),
  );
  configurable(
    domain
      .command('verify <tenant_id> <domain>')
      .description(
        "verify a domain by its TXT record (sso.dnsServers, else the system's resolvers)",
      ),
  ).action(async (tenantId: string, name: string, _options: ConfigOptions, command: Command) =>
    domains.domainVerify(await configOf(command), tenantId, name),
  );
  configurable(
    domain
      .command('remove <tenant_id> <domain>')
      .description('remove a domain: an IdP naming it no longer signs anyone in with it'),
  ).action(async (tenantId: string, name: string, _options: ConfigOptions, command: Command) =>
    domains.domainRemove(await configOf(command), tenantId, name),
  );
}

function addMembers(program: Command): void {
  const member = program.command('member').description('manage org tenant memberships');
  configurable(
    member
      .command('add <tenant_id> <email>')
      .description("add a member (role: admin for the tenant's creator, else member)")
      .option('--role <role>', 'admin or member; given to an existing member too'),
  ).action(async (tenantId: string, email: string, options: { role?: string }, command: Command) =>
    members.memberChange(
      await configOf(command),
      'add',
      tenantId,
      email,
      members.roleOption(options.role),
    ),
  );
  configurable(
    member
      .command('remove <tenant_id> <email>')
      .description('remove a member; their sessions for the tenant end on every instance'),
  ).action(async (tenantId: string, email: string, _options: ConfigOptions, command: Command) =>
    members.memberChange(await configOf(command), 'remove', tenantId, email),
  );
  configurable(
    member
      .command('role <tenant_id> <email> <role>')
      .description(
        'give a member a role (admin or member); their sessions for the tenant end on every instance',
      ),
  ).action(
    async (
      tenantId: string,
      email: string,
      role: string,
      _options: ConfigOptions,
      command: Command,
    ) => members.memberRole(await configOf(command), tenantId, email, members.roleOption(role)!),
  );
  configurable(
    member.command('list <tenant_id>').description("list a tenant's members and their roles"),
  ).action(async (tenantId: string, _options: ConfigOptions, command: Command) =>
    members.memberList(await configOf(command), tenantId),
  );
}

function addClients(program: Command): void {
  const client = program
    .command('client')
    .description("manage an org tenant's machine clients (secrets are printed once)");
  configurable(
    client
      .command('add')
      .description('create a machine client; prints its client_id and client_secret, once')
      .requiredOption('--tenant <tenant_id>', 'the org tenant it belongs to')
      .requiredOption('--name <name>', 'display name')
      .option('--scopes <scopes>', 'comma-separated scopes it may hold')
      .option('--expires-at <unix>', 'Unix time (seconds) it expires at'),
  ).action(async (options: clients.ClientAddOptions, command: Command) =>
    clients.clientAdd(await configOf(command), options),
  );
  configurable(
    client
      .command('list')
      .description("list a tenant's machine clients (never their secrets)")
      .requiredOption('--tenant <tenant_id>', 'the org tenant'),
  ).action(async (options: { tenant: string }, command: Command) =>
    clients.clientList(await configOf(command), options.tenant),
  );
  configurable(
    client
      .command('rotate <client_id>')
      .description('give a client a new secret, printed once; the old one is refused from now on'),
  ).action(async (clientId: string, _options: ConfigOptions, command: Command) =>
    clients.clientRotate(await configOf(command), clientId),
  );
  configurable(
    client.command('remove <client_id>').description('remove a machine client and its API keys'),
  ).action(async (clientId: string, _options: ConfigOptions, command: Command) =>
    clients.clientRemove(await configOf(command), clientId),
  );

  const clientKey = client.command('key').description("a machine client's API keys");
  configurable(
    clientKey
      .command('add <client_id>')
      .description('create an API key; prints its key_id and api_key, once')
      .option('--expires-at <unix>', 'Unix time (seconds) it expires at'),
  ).action(async (clientId: string, options: { expiresAt?: string }, command: Command) =>
    apiKeys.keyAdd(await configOf(command), clientId, options),
  );
  configurable(
    clientKey.command('list <client_id>').description("list a client's API keys (never the keys)"),
  ).action(async (clientId: string, _options: ConfigOptions, command: Command) =>
    apiKeys.keyList(await configOf(command), clientId),
  );
  configurable(
    clientKey.command('remove <client_id> <key_id>').description('remove an API key'),
  ).action(async (clientId: string, keyId: string, _options: ConfigOptions, command: Command) =>
    apiKeys.keyRemove(await configOf(command), clientId, keyId),
  );
}

function addKeys(program: Command): void {
  const keys = program.command('keys').description('signing keys in tokens.keys');
  configurable(
    keys
      .command('add')
      .description(
        'add a new signing key to tokens.keys (it signs after the next start or reload)',
      ),
  ).action(async (_options: ConfigOptions, command: Command) => keysAdd(await configOf(command)));
  configurable(
    keys.command('list').description('kid, algorithm, creation time and which key signs'),
  ).action(async (_options: ConfigOptions, command: Command) => keysList(await configOf(command)));
  configurable(
    keys
      .command('retire <kid>')
      .description('remove a key that no longer signs, once no token it signed can be valid')
      .option('--now', 'remove it at once: the tokens it signed are refused from the next reload'),
  ).action(async (kid: string, options: { now?: boolean }, command: Command) =>
    keysRetire(await configOf(command), kid, options),
  );
}

function addAuditAndHealth(program: Command): void {
  const audit = program.command('audit').description('the audit streams (docs/audit.md)');
  configurable(
    audit
      .command('tail')
      .description(
        'print audit events as JSON lines, oldest first: one tenant’s, or every stream merged by time',
      )
      .option('--tenant <tenant_id>', "only this tenant's stream")
      .option('--since <when>', 'from an ISO 8601 time, or a duration back from now (15m, 2h, 7d)')
      .option('--follow', 'then print new events as they come, until interrupted'),
  ).action(async (options: TailOptions, command: Command) =>
    auditTail(await configOf(command), options),
  );

  configurable(
    program
      .command('health')
      .description(
        "ask a running gateway's /healthz on its admin listener (listen with listen.opsEndpoints); exit 0 when healthy",
      )
      .option('--url <url>', 'ask this URL instead'),
  ).action(async (options: { url?: string }, command: Command) =>
    health(await configOf(command), options),
  );
}
