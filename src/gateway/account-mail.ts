/**
 * The mailed account flows' deps (issue 45), with `mail`: e-mail
 * verification and password reset, for the identity API. Undefined without
 * `mail` (then neither is routed, and no sign-in asks for a verified address).
 */
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/index.js';
import type { Core } from '../core/create-core.js';
import { mailCounters, type AccountMailDeps } from '../identity/account-mail.js';

export function buildAccountMail(
  config: GatewayConfig,
  core: Core,
  log: Logger,
): AccountMailDeps | undefined {
  const { mailer } = core;
  // `mail` needs `publicUrl` (config/schema/mail.ts): every link is built from it.
  if (mailer === undefined || config.publicUrl === undefined) return undefined;
  return {
    store: core.store,
    accounts: core.accounts,
    audit: core.audit,
    mailer,
    publicUrl: config.publicUrl,
    limits: config.limits.passwordReset,
    counters: mailCounters(core.store, config.limits.passwordReset),
    verifyEmail: config.signup.verifyEmail ?? config.mail !== undefined,
    log,
  };
}
