/**
 * What the mailed account flows (issue 45: e-mail verification, password
 * reset) are built from: the store, the accounts, the audit log, the mailer,
 * `publicUrl` (every link's origin) and `limits.passwordReset`. Built once
 * by the gateway (`gateway/account-mail.ts`) when `mail` is configured.
 */
import type { Logger } from 'pino';
import type { AuditActor } from '../audit/events.js';
import type { AuditRecorder } from '../audit/recorder.js';
import type { Accounts } from '../auth/accounts.js';
import type { Mailer } from '../mail/mailer.js';
import type { Store } from '../store/types.js';

/** `limits.passwordReset`: requests per client IP, mails per address, in one window. */
export interface MailLimits {
  perEmail: number;
  perIp: number;
  windowSeconds: number;
}

export interface AccountMailDeps {
  store: Store;
  accounts: Accounts;
  audit: AuditRecorder;
  mailer: Mailer;
  /** The gateway's external origin: every mailed link's (`mail/links.ts`). */
  publicUrl: string;
  limits: MailLimits;
  /** Made once from `limits` ({@link mailCounters}): a counter made per request would count nothing. */
  counters: MailCounters;
  /** `signup.verifyEmail ?? (mail !== undefined)`: a password signs in only once the address is verified. */
  verifyEmail: boolean;
  /** What went wrong in the background (a reset's lookup or mail after its answer). */
  log: Logger;
}

/** The audit actor of the request, once it is known whom it acts as. */
export type ActorOf = (email: string) => AuditActor;

export type MailCounters = ReturnType<typeof mailCounters>;

/** The counters of `limits.passwordReset`, on the store (every instance counts together). */
export function mailCounters(store: Pick<Store, 'loginCounter'>, limits: MailLimits) {
  const { perEmail, perIp, windowSeconds } = limits;
  const counter = (name: string, points: number) =>
    store.loginCounter({ name, points, windowSeconds });
  return {
    /** Password-reset requests per client IP: past it 429. */
    resetsByIp: counter('reset-ip', perIp),
    /** Reset mails per address: past it nothing more is sent. */
    resetMailsByEmail: counter('reset-mail-email', perEmail),
    /** Verification mails per address: past it nothing more is sent. */
    verificationMailsByEmail: counter('verify-mail-email', perEmail),
  };
}
